//! JPEGs through the gate's own JPEG decoding, natively: `jpeg-decoder` at a reduced DCT scale,
//! which reads every coefficient of every block (`downsample::verify_jpeg`, 1/8) and decodes at
//! the scale that covers the fit (`downsample::fit`, 1/8…1), behind the header read and the
//! container walk that bound it. The gate keeps this decoder, maintained but no longer developed,
//! for its scaled decode (SECURITY.md says why); this target puts every execution on that path
//! (the `gate` target gives it one in ten).
//!
//! The first byte: bit 0 downsample (an input over the profile's side or base64 limit goes to the
//! fit; inputs that declare 2,000–16,000 px reach the 1/2, 1/4 and 1/8 scales), bit 1 verify by
//! header only (else verify full, the 1/8 decode), bits 6-7 the provider profile. Besides no panic,
//! no hang, no memory blowup: an admitted JPEG is within the profile's base64 limit and is JPEG,
//! its `original_size` is the input's; a refusal has words.
#![no_main]

use base64::Engine as _;
use libfuzzer_sys::fuzz_target;
use mediagate_guest::{Options, Provider, Verify, admit_image, sniff};

const PROVIDERS: [Provider; 4] = [Provider::Anthropic, Provider::OpenAi, Provider::Gemini, Provider::Ollama];

fuzz_target!(|data: &[u8]| {
    let Some((&selector, jpeg)) = data.split_first() else { return };
    let options = Options {
        downsample: selector & 0x01 != 0,
        verify: if selector & 0x02 != 0 { Verify::Header } else { Verify::Full },
        provider: PROVIDERS[usize::from(selector >> 6)],
        ..Options::default()
    };
    match admit_image(jpeg, "image/jpeg", &options) {
        Ok(a) => {
            let limit = options.provider.profile().max_base64_len;
            assert!(a.base64_len() <= limit, "admitted {} base64 bytes over the limit {limit}", a.base64_len());
            assert_eq!(a.original_size, jpeg.len() as u64);
            assert_eq!(a.mime, "image/jpeg");
            let bytes =
                base64::engine::general_purpose::STANDARD.decode(a.base64(jpeg)).expect("admitted data is base64");
            assert_eq!(sniff(&bytes), "image/jpeg", "what is admitted as JPEG is JPEG");
        }
        Err(r) => assert!(!r.message.is_empty(), "a refusal names its reason in words"),
    }
});
