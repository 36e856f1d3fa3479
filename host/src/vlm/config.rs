//! Where the VLM is and how long to wait for it: from flags, else the environment.

use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    /// `POST {base}/chat/completions` (OpenAI, Ollama, vLLM, LiteLLM, llama.cpp server…).
    OpenAi,
    /// `POST {base}/v1/messages` (Anthropic).
    Anthropic,
}

impl Api {
    pub fn parse(s: &str) -> Option<Api> {
        match s.to_ascii_lowercase().as_str() {
            "openai" => Some(Api::OpenAi),
            "anthropic" => Some(Api::Anthropic),
            _ => None,
        }
    }
}

#[derive(Clone)]
pub struct VlmConfig {
    pub api: Api,
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
    pub connect_timeout: Duration,
    /// Longest wait for the response to start, and between two pieces of the stream.
    pub idle_timeout: Duration,
    /// Longest a whole reply may stream, however steadily text arrives.
    pub max_reply_time: Duration,
    /// Retries before the first byte (connect errors, 429, 5xx).
    pub max_retries: u32,
    pub retry_backoff: Duration,
    /// Bound on one wait between retries, whatever Retry-After says.
    pub max_retry_wait: Duration,
    /// Bound on one SSE event's size.
    pub max_event_bytes: usize,
}

impl std::fmt::Debug for VlmConfig {
    // The key is never printed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VlmConfig")
            .field("api", &self.api)
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .finish_non_exhaustive()
    }
}

impl VlmConfig {
    pub fn new(api: Api, base_url: impl Into<String>, model: impl Into<String>) -> Self {
        VlmConfig {
            api,
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            connect_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(120),
            max_reply_time: Duration::from_secs(600),
            max_retries: 2,
            retry_backoff: Duration::from_millis(500),
            max_retry_wait: Duration::from_secs(30),
            max_event_bytes: 1 << 20,
        }
    }

    /// Reads `MEDIAGATE_VLM_URL`, `MEDIAGATE_VLM_MODEL`, `MEDIAGATE_VLM_API` (`openai` |
    /// `anthropic`, default `openai`) and `MEDIAGATE_VLM_API_KEY` (falling back to
    /// `OPENAI_API_KEY` / `ANTHROPIC_API_KEY`), each overridden by the argument when given.
    /// `None` when no URL is configured: the deployment has no VLM.
    pub fn resolve(
        url: Option<String>,
        model: Option<String>,
        api: Option<Api>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<VlmConfig>, String> {
        let Some(url) = url.or_else(|| env("MEDIAGATE_VLM_URL")).filter(|u| !u.trim().is_empty()) else {
            return Ok(None);
        };
        let api = match api {
            Some(a) => a,
            None => match env("MEDIAGATE_VLM_API") {
                Some(s) => {
                    Api::parse(&s).ok_or_else(|| format!("MEDIAGATE_VLM_API must be openai or anthropic, not {s:?}"))?
                }
                None => Api::OpenAi,
            },
        };
        let model = model
            .or_else(|| env("MEDIAGATE_VLM_MODEL"))
            .ok_or("a VLM URL is configured but no model: set --vlm-model or MEDIAGATE_VLM_MODEL")?;
        let fallback = match api {
            Api::OpenAi => "OPENAI_API_KEY",
            Api::Anthropic => "ANTHROPIC_API_KEY",
        };
        let mut config = VlmConfig::new(api, url, model);
        config.api_key = env("MEDIAGATE_VLM_API_KEY").or_else(|| env(fallback)).filter(|k| !k.is_empty());
        Ok(Some(config))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
    }

    #[test]
    fn no_url_means_no_vlm() {
        assert!(VlmConfig::resolve(None, Some("m".into()), None, env(&[])).unwrap().is_none());
    }

    #[test]
    fn flags_override_the_environment_and_keys_fall_back() {
        let vars = [
            ("MEDIAGATE_VLM_URL", "http://env"),
            ("MEDIAGATE_VLM_MODEL", "env-model"),
            ("ANTHROPIC_API_KEY", "sk-ant"),
        ];
        let c =
            VlmConfig::resolve(Some("http://flag".into()), None, Some(Api::Anthropic), env(&vars)).unwrap().unwrap();
        assert_eq!((c.base_url.as_str(), c.model.as_str(), c.api), ("http://flag", "env-model", Api::Anthropic));
        assert_eq!(c.api_key.as_deref(), Some("sk-ant"));
        assert!(!format!("{c:?}").contains("sk-ant"), "the key is never printed");
    }

    #[test]
    fn a_url_without_a_model_is_an_error() {
        assert!(VlmConfig::resolve(Some("http://x".into()), None, None, env(&[])).is_err());
        assert!(
            VlmConfig::resolve(
                None,
                None,
                None,
                env(&[("MEDIAGATE_VLM_URL", "u"), ("MEDIAGATE_VLM_MODEL", "m"), ("MEDIAGATE_VLM_API", "grok")])
            )
            .is_err()
        );
    }
}
