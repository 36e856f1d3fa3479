//! Provider profiles: what each content API accepts, as data.

use crate::signature::ImageType;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Provider {
    #[default]
    Anthropic,
    OpenAi,
    Gemini,
    Ollama,
}

impl Provider {
    pub fn parse(name: &str) -> Option<Provider> {
        match name.to_ascii_lowercase().as_str() {
            "anthropic" => Some(Provider::Anthropic),
            "openai" => Some(Provider::OpenAi),
            "gemini" => Some(Provider::Gemini),
            "ollama" => Some(Provider::Ollama),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Provider::Anthropic => "anthropic",
            Provider::OpenAi => "openai",
            Provider::Gemini => "gemini",
            Provider::Ollama => "ollama",
        }
    }

    pub fn profile(self) -> &'static Profile {
        match self {
            Provider::Anthropic => &ANTHROPIC,
            Provider::OpenAi => &OPENAI,
            Provider::Gemini => &GEMINI,
            Provider::Ollama => &OLLAMA,
        }
    }
}

/// The limits a provider's content API puts on one image.
#[derive(Debug)]
pub struct Profile {
    pub provider: Provider,
    pub image_types: &'static [ImageType],
    /// Longest base64 string accepted for one image.
    pub max_base64_len: u64,
    /// Largest side in pixels accepted without resizing; `None` where the provider states none
    /// (it scales on its side).
    pub max_side: Option<u32>,
    /// The provider accepts only single-frame GIFs.
    pub still_gif_only: bool,
}

impl Profile {
    pub fn accepts(&self, t: ImageType) -> bool {
        self.image_types.contains(&t)
    }
}

use ImageType::{Gif, Jpeg, Png, WebP};

/// 5 MiB of base64 per image, 8000 px per side.
pub static ANTHROPIC: Profile = Profile {
    provider: Provider::Anthropic,
    image_types: &[Png, Jpeg, Gif, WebP],
    max_base64_len: 5 * 1024 * 1024,
    max_side: Some(8000),
    still_gif_only: false,
};

/// 20 MB per image; GIFs must not be animated.
pub static OPENAI: Profile = Profile {
    provider: Provider::OpenAi,
    image_types: &[Png, Jpeg, WebP, Gif],
    max_base64_len: 20_000_000,
    max_side: None,
    still_gif_only: true,
};

/// 20 MB inline data per request; no GIF.
pub static GEMINI: Profile = Profile {
    provider: Provider::Gemini,
    image_types: &[Png, Jpeg, WebP],
    max_base64_len: 20_000_000,
    max_side: None,
    still_gif_only: false,
};

/// Ollama's OpenAI-compatible endpoint: no GIF; the same 20 MB bound as OpenAI's API.
pub static OLLAMA: Profile = Profile {
    provider: Provider::Ollama,
    image_types: &[Png, Jpeg, WebP],
    max_base64_len: 20_000_000,
    max_side: None,
    still_gif_only: false,
};

/// The request dialect `admit_request` reads, and whose request-level rules apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    /// Anthropic Messages (`POST /v1/messages`).
    Anthropic,
    /// OpenAI Chat Completions (`POST /v1/chat/completions`).
    OpenAi,
    /// Gemini `generateContent` (`POST /v1beta/models/{model}:generateContent`, and its stream
    /// and `countTokens`).
    Gemini,
    /// Anthropic Message Batches (`POST /v1/messages/batches`): `{"requests": [{"custom_id",
    /// "params"}]}`, each `params` a Messages request under its rules.
    AnthropicBatch,
    /// A JSON body to an endpoint without a dialect of its own: every media block and media
    /// string in it judged wherever it sits, under no request-level rule (none is known).
    Other,
}

impl Api {
    pub const ALL: [Api; 5] = [Api::Anthropic, Api::OpenAi, Api::Gemini, Api::AnthropicBatch, Api::Other];

    pub fn name(self) -> &'static str {
        match self {
            Api::Anthropic => "anthropic",
            Api::OpenAi => "openai",
            Api::Gemini => "gemini",
            Api::AnthropicBatch => "anthropic-batch",
            Api::Other => "other",
        }
    }

    pub fn parse(name: &str) -> Option<Api> {
        Api::ALL.into_iter().find(|api| api.name() == name)
    }

    /// The provider whose per-image profile applies unless the caller names another.
    pub fn provider(self) -> Provider {
        match self {
            Api::Anthropic | Api::AnthropicBatch => Provider::Anthropic,
            Api::OpenAi => Provider::OpenAi,
            Api::Gemini => Provider::Gemini,
            // No provider is known: the default profile.
            Api::Other => Provider::ALL[0],
        }
    }

    /// The rules on one request (for a batch, on each of its requests).
    pub fn rules(self) -> &'static RequestRules {
        match self {
            Api::Anthropic | Api::AnthropicBatch => &ANTHROPIC_REQUEST,
            Api::OpenAi => &OPENAI_REQUEST,
            Api::Gemini => &GEMINI_REQUEST,
            Api::Other => &NO_REQUEST_RULES,
        }
    }
}

/// A number a provider enforces on a whole request, with the name reports give it.
#[derive(Debug)]
pub struct Rule<T> {
    /// `<api>.<rule>`: what a report's `rule` field says.
    pub name: &'static str,
    pub limit: T,
    /// The rule in words, for refusals.
    pub words: &'static str,
}

/// When a request carries more than `over` images, every image must fit `max_side`.
#[derive(Debug)]
pub struct ManyImages {
    pub over: u32,
    pub max_side: u32,
}

/// What a provider enforces on a whole request rather than on one image, as data.
#[derive(Debug)]
pub struct RequestRules {
    pub api: Api,
    /// Images one request may carry; the ones past it are refused in their slots.
    pub max_images: Option<Rule<u32>>,
    /// A tighter largest side for requests with many images.
    pub many_images: Option<Rule<ManyImages>>,
    /// Bytes of the whole request body (the JSON text).
    pub max_request_bytes: Option<Rule<u64>>,
    /// Bytes of all images of a request, decoded.
    pub max_image_bytes: Option<Rule<u64>>,
}

/// Anthropic Messages. Source: "Vision" (platform.claude.com/docs/en/build-with-claude/vision),
/// General limits: "100 per request on the API, for models with a 200k-token context window"
/// (600 for the others: 100 holds for every model); "The maximal dimensions per image are
/// 8000x8000 px. If you submit more than 20 images in one API request, this limit is reduced to
/// 2000x2000 px." "API overview", Request size limits: "a maximum request size of 32 MB for
/// standard endpoints, including the Messages API" (413 `request_too_large` from Cloudflare); read
/// as 32,000,000 bytes, the stricter of MB and MiB.
pub static ANTHROPIC_REQUEST: RequestRules = RequestRules {
    api: Api::Anthropic,
    max_images: Some(Rule {
        name: "anthropic.images_per_request",
        limit: 100,
        words: "Anthropic accepts at most 100 images in one request",
    }),
    many_images: Some(Rule {
        name: "anthropic.many_images_max_side",
        limit: ManyImages { over: 20, max_side: 2000 },
        words: "for a request with more than 20 images (Anthropic)",
    }),
    max_request_bytes: Some(Rule {
        name: "anthropic.request_bytes",
        limit: 32_000_000,
        words: "Anthropic accepts a Messages request of at most 32 MB",
    }),
    max_image_bytes: None,
};

/// OpenAI Chat Completions. Source: "Images and vision" (platform.openai.com/docs/guides/images),
/// Image input requirements: "Up to 20MB per image" (the OpenAI profile), "Up to 500 individual
/// images per request", "Up to 50 MB image bytes per request". No request body size is stated.
pub static OPENAI_REQUEST: RequestRules = RequestRules {
    api: Api::OpenAi,
    max_images: Some(Rule {
        name: "openai.images_per_request",
        limit: 500,
        words: "OpenAI accepts at most 500 images in one request",
    }),
    many_images: None,
    max_request_bytes: None,
    max_image_bytes: Some(Rule {
        name: "openai.image_bytes_per_request",
        limit: 50_000_000,
        words: "OpenAI accepts at most 50 MB of image bytes in one request",
    }),
};

/// Gemini `generateContent`. Source: "Image understanding" (ai.google.dev/gemini-api/docs/image-understanding):
/// "When the combined size of your files and system instructions exceeds 20 MB, use the Files
/// API" (the Gemini profile's per-image bound too); read as 20,000,000 bytes of request, the
/// stricter of MB and MiB. "Gemini 2.x … can handle up to 3,600 image files per request".
pub static GEMINI_REQUEST: RequestRules = RequestRules {
    api: Api::Gemini,
    max_images: Some(Rule {
        name: "gemini.images_per_request",
        limit: 3600,
        words: "Gemini accepts at most 3,600 images in one request",
    }),
    many_images: None,
    max_request_bytes: Some(Rule {
        name: "gemini.request_bytes",
        limit: 20_000_000,
        words: "Gemini accepts inline data in a request of at most 20 MB (larger files go through its Files API)",
    }),
    max_image_bytes: None,
};

/// A body to an endpoint without a dialect: no request-level rule is known.
pub static NO_REQUEST_RULES: RequestRules = RequestRules {
    api: Api::Other,
    max_images: None,
    many_images: None,
    max_request_bytes: None,
    max_image_bytes: None,
};

/// The Batch API a batch file is written for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BatchApi {
    /// OpenAI Batch: JSON lines `{"custom_id", "method", "url", "body"}`.
    OpenAi,
    /// Anthropic Message Batches: `{"custom_id", "params"}` items.
    Anthropic,
}

impl BatchApi {
    pub fn name(self) -> &'static str {
        match self {
            BatchApi::OpenAi => "openai",
            BatchApi::Anthropic => "anthropic",
        }
    }

    pub fn rules(self) -> &'static BatchRules {
        match self {
            BatchApi::OpenAi => &OPENAI_BATCH,
            BatchApi::Anthropic => &ANTHROPIC_BATCH,
        }
    }
}

/// What a Batch API enforces on a whole batch file, as data.
#[derive(Debug)]
pub struct BatchRules {
    pub max_requests: Rule<u64>,
    pub max_bytes: Rule<u64>,
}

/// OpenAI Batch. Source: "Batch API" (platform.openai.com/docs/guides/batch): "A single batch may
/// include up to 50,000 requests, and a batch input file can be up to 200 MB in size"; read as
/// 200,000,000 bytes, the stricter of MB and MiB.
pub static OPENAI_BATCH: BatchRules = BatchRules {
    max_requests: Rule {
        name: "openai.batch_requests",
        limit: 50_000,
        words: "OpenAI takes at most 50,000 requests in one batch: split the file",
    },
    max_bytes: Rule {
        name: "openai.batch_file_bytes",
        limit: 200_000_000,
        words: "OpenAI takes a batch input file of at most 200 MB: split the file",
    },
};

/// Anthropic Message Batches. Source: "Batch processing" (platform.claude.com/docs/en/build-with-
/// claude/batch-processing): "A Message Batch is limited to either 100,000 Message requests or
/// 256 MB in size, whichever is reached first"; read as 256,000,000 bytes.
pub static ANTHROPIC_BATCH: BatchRules = BatchRules {
    max_requests: Rule {
        name: "anthropic.batch_requests",
        limit: 100_000,
        words: "Anthropic takes at most 100,000 requests in one Message Batch: split the file",
    },
    max_bytes: Rule {
        name: "anthropic.batch_bytes",
        limit: 256_000_000,
        words: "Anthropic takes a Message Batch of at most 256 MB: split the file",
    },
};

// Below the code the component runs, so that the line numbers its panic locations carry stay put.
impl Provider {
    /// Every profile, the default first (the generated packages list them so).
    pub const ALL: [Provider; 4] = [Provider::Anthropic, Provider::OpenAi, Provider::Gemini, Provider::Ollama];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_carry_the_documented_types() {
        assert!(Provider::Anthropic.profile().accepts(Gif));
        assert!(Provider::OpenAi.profile().accepts(Gif));
        assert!(!Provider::Gemini.profile().accepts(Gif));
        assert!(!Provider::Ollama.profile().accepts(Gif));
        assert_eq!(Provider::Anthropic.profile().max_base64_len, 5_242_880);
        assert_eq!(Provider::Anthropic.profile().max_side, Some(8000));
    }

    #[test]
    fn request_rules_carry_the_documented_numbers() {
        let a = Api::Anthropic.rules();
        assert_eq!(a.max_images.as_ref().unwrap().limit, 100);
        let many = &a.many_images.as_ref().unwrap().limit;
        assert_eq!((many.over, many.max_side), (20, 2000));
        assert_eq!(a.max_request_bytes.as_ref().unwrap().limit, 32_000_000);
        let o = Api::OpenAi.rules();
        assert_eq!(o.max_images.as_ref().unwrap().limit, 500);
        assert_eq!(o.max_image_bytes.as_ref().unwrap().limit, 50_000_000);
        let g = Api::Gemini.rules();
        assert_eq!(g.max_images.as_ref().unwrap().limit, 3600);
        assert_eq!(g.max_request_bytes.as_ref().unwrap().limit, 20_000_000);
        // A batch's requests are each a Messages request.
        assert!(std::ptr::eq(Api::AnthropicBatch.rules(), Api::Anthropic.rules()));
        // With downsampling on, the ladder fits every image inside FIT_SIDE: no side rule may be
        // tighter than that, or the ladder would admit what the rule refuses.
        for api in [Api::Anthropic, Api::OpenAi, Api::Gemini] {
            if let Some(rule) = &api.rules().many_images {
                assert!(rule.limit.max_side >= crate::limits::FIT_SIDE);
            }
            assert!(api.rules().max_images.as_ref().unwrap().name.starts_with(api.name()));
        }
    }

    #[test]
    fn names_round_trip() {
        for p in [Provider::Anthropic, Provider::OpenAi, Provider::Gemini, Provider::Ollama] {
            assert_eq!(Provider::parse(p.name()), Some(p));
        }
        assert_eq!(Provider::parse("OpenAI"), Some(Provider::OpenAi));
        assert_eq!(Provider::parse("mistral"), None);
        for api in Api::ALL {
            assert_eq!(Api::parse(api.name()), Some(api));
        }
    }
}
