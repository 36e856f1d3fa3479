//! The sandbox runs the guest built for wasm32, whose lanes are simd128; the same source built
//! natively takes other instructions (baseline x86-64, and AVX2 for the JPEG fit's per-block
//! kernels where the CPU has it). The bytes must not depend on which: every path of the fit (the
//! JPEG kept in planes, upright and turned; a PNG written at the quick level; a PNG photo gone to
//! JPEG through the RGB path) gives the same file in the sandbox as natively.

use mediagate::gate::{InputMedia, Verdict};
use mediagate::{Gate, Runtime, RuntimeConfig};

fn corpus(path: &str) -> Vec<u8> {
    let at = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus").join(path);
    std::fs::read(&at).unwrap_or_else(|e| panic!("{}: {e}", at.display()))
}

/// The benchmark photo as a 4000x3000 PNG: over every provider's limit as PNG, so its fit goes to
/// JPEG from the fitted RGB image.
fn png_photo() -> Vec<u8> {
    let photo = image::load_from_memory(&corpus("bench/photo-12mp.jpg")).unwrap();
    let mut png = Vec::new();
    photo.write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png).unwrap();
    png
}

#[test]
fn the_sandbox_and_a_native_build_fit_to_the_same_bytes() {
    let runtime = Runtime::new(RuntimeConfig::default()).unwrap();
    let gate = Gate::new(runtime).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let options = gate.default_options();
    let native_options = mediagate_guest::Options::default();
    let inputs = [
        ("the 12 MP photo", corpus("bench/photo-12mp.jpg"), "image/jpeg", "image/jpeg"),
        ("a photo stored sideways", corpus("bench/photo-exif-rotated.jpg"), "image/jpeg", "image/jpeg"),
        ("the screenshot", corpus("bench/screenshot-3456x2234.png"), "image/png", "image/png"),
        ("the photo as a PNG", png_photo(), "image/png", "image/jpeg"),
    ];
    for (name, bytes, mime, fitted_to) in inputs {
        let input = InputMedia::new(bytes.clone(), Some(mime));
        let Verdict::Admitted(sandboxed) = rt.block_on(gate.admit(&input, options)).unwrap().answer.unwrap().verdict
        else {
            panic!("{name}: refused in the sandbox");
        };
        let native = mediagate_guest::admit_image(&bytes, mime, &native_options).unwrap();
        assert!(sandboxed.reencoded && native.reencoded, "{name}: not written again, so nothing is compared");
        assert_eq!((sandboxed.mime.as_str(), native.mime), (fitted_to, fitted_to), "{name}");
        assert!(
            sandboxed.bytes(&bytes) == native.bytes(&bytes),
            "{name}: the sandbox's bytes differ from the native build's"
        );
    }
}
