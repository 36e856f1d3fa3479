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
    fn names_round_trip() {
        for p in [Provider::Anthropic, Provider::OpenAi, Provider::Gemini, Provider::Ollama] {
            assert_eq!(Provider::parse(p.name()), Some(p));
        }
        assert_eq!(Provider::parse("OpenAI"), Some(Provider::OpenAi));
        assert_eq!(Provider::parse("mistral"), None);
    }
}
