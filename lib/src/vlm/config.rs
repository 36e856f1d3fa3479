//! Where the VLM is and how long to wait for it: from flags, else the environment.

use std::time::Duration;

use crate::facts::{env as names, vlm as bounds, vlm_retry};

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
    /// The vendor's key variable (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`) that was set but not sent,
    /// because the URL is not that vendor's API: named when the provider asks for a key.
    pub withheld_key: Option<&'static str>,
}

impl std::fmt::Debug for VlmConfig {
    // The key is never printed, nor the URL's user, password or query.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VlmConfig")
            .field("api", &self.api)
            .field("base_url", &super::shown_url(&self.base_url))
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
            connect_timeout: Duration::from_secs(bounds::CONNECT_TIMEOUT_SECS),
            idle_timeout: Duration::from_secs(bounds::IDLE_TIMEOUT_SECS),
            max_reply_time: Duration::from_secs(bounds::MAX_REPLY_SECS),
            max_retries: vlm_retry::MAX_RETRIES,
            retry_backoff: Duration::from_millis(vlm_retry::INITIAL_BACKOFF_MS),
            max_retry_wait: Duration::from_millis(vlm_retry::MAX_WAIT_MS),
            max_event_bytes: bounds::MAX_EVENT_BYTES,
            withheld_key: None,
        }
    }

    /// Reads the variables [`facts::env`](crate::facts::env) names: the URL, the model, the API
    /// (`openai` | `anthropic`, default `openai`) and the key, each overridden by the argument
    /// when given. Without the own key variable the vendor's own variable (`OPENAI_API_KEY` /
    /// `ANTHROPIC_API_KEY`) is the key only for that vendor's API (see [`vendor_key_variable`]):
    /// a URL from someone else's configuration never collects the user's global key.
    /// `None` when no URL is configured: the deployment has no VLM.
    pub fn resolve(
        url: Option<String>,
        model: Option<String>,
        api: Option<Api>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<VlmConfig>, String> {
        let Some(url) = url.or_else(|| env(names::VLM_URL)).filter(|u| !u.trim().is_empty()) else {
            return Ok(None);
        };
        let api = match api {
            Some(a) => a,
            None => match env(names::VLM_API) {
                Some(s) => Api::parse(&s)
                    .ok_or_else(|| format!("{} must be openai or anthropic, not {s:?}", names::VLM_API))?,
                None => Api::OpenAi,
            },
        };
        let model = model
            .or_else(|| env(names::VLM_MODEL))
            .ok_or_else(|| format!("a VLM URL is configured but no model: set --vlm-model or {}", names::VLM_MODEL))?;
        let vendor_variable = match api {
            Api::OpenAi => names::OPENAI_API_KEY,
            Api::Anthropic => names::ANTHROPIC_API_KEY,
        };
        let own_key = env(names::VLM_API_KEY).filter(|k| !k.is_empty());
        let vendor_key = env(vendor_variable).filter(|k| !k.is_empty());
        let for_vendor = vendor_key_variable(api, &url) == Some(vendor_variable);
        let mut config = VlmConfig::new(api, url, model);
        config.withheld_key = (own_key.is_none() && vendor_key.is_some() && !for_vendor).then_some(vendor_variable);
        config.api_key = own_key.or(if for_vendor { vendor_key } else { None });
        Ok(Some(config))
    }
}

/// The vendor's key variable that may stand in for the own key variable
/// ([`facts::env::VLM_API_KEY`](crate::facts::env::VLM_API_KEY)) at `url`: only the vendor's own API over https on its standard port — `https://api.openai.com` for `OPENAI_API_KEY`
/// (OpenAI dialect), `https://api.anthropic.com` for `ANTHROPIC_API_KEY` (Anthropic dialect), no
/// user or password in the URL. Any other URL gets a key only from the own key variable.
pub fn vendor_key_variable(api: Api, url: &str) -> Option<&'static str> {
    let url = url::Url::parse(url).ok()?;
    let (host, variable) = match api {
        Api::OpenAi => ("api.openai.com", names::OPENAI_API_KEY),
        Api::Anthropic => ("api.anthropic.com", names::ANTHROPIC_API_KEY),
    };
    let vendors = url.scheme() == "https"
        && url.host_str() == Some(host)
        && url.port().is_none()
        && url.username().is_empty()
        && url.password().is_none();
    vendors.then_some(variable)
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
        let vars =
            [(names::VLM_URL, "http://env"), (names::VLM_MODEL, "env-model"), (names::ANTHROPIC_API_KEY, "sk-ant")];
        let c = VlmConfig::resolve(Some("https://api.anthropic.com".into()), None, Some(Api::Anthropic), env(&vars))
            .unwrap()
            .unwrap();
        assert_eq!(
            (c.base_url.as_str(), c.model.as_str(), c.api),
            ("https://api.anthropic.com", "env-model", Api::Anthropic)
        );
        assert_eq!(c.api_key.as_deref(), Some("sk-ant"));
        assert!(!format!("{c:?}").contains("sk-ant"), "the key is never printed");
    }

    #[test]
    fn the_vendors_key_goes_only_to_the_vendors_api() {
        let resolve = |api: Api, url: &str, vars: &[(&str, &str)]| {
            let mut vars = vars.to_vec();
            vars.push((names::VLM_MODEL, "m"));
            VlmConfig::resolve(Some(url.into()), None, Some(api), env(&vars)).unwrap().unwrap()
        };
        let openai = [(names::OPENAI_API_KEY, "sk-openai"), (names::ANTHROPIC_API_KEY, "sk-ant")];
        for url in ["https://api.openai.com/v1", "https://api.openai.com/v1/", "HTTPS://API.OPENAI.COM/v1"] {
            assert_eq!(resolve(Api::OpenAi, url, &openai).api_key.as_deref(), Some("sk-openai"), "{url}");
        }
        assert_eq!(resolve(Api::Anthropic, "https://api.anthropic.com", &openai).api_key.as_deref(), Some("sk-ant"));
        for (api, url) in [
            (Api::OpenAi, "https://collector.example/v1"),
            (Api::OpenAi, "http://api.openai.com/v1"),
            (Api::OpenAi, "https://api.openai.com:8443/v1"),
            (Api::OpenAi, "https://api.openai.com.example/v1"),
            (Api::OpenAi, "https://me@api.openai.com/v1"),
            (Api::OpenAi, "https://api.anthropic.com"),
            (Api::Anthropic, "https://api.openai.com/v1"),
            (Api::Anthropic, "http://127.0.0.1:8080"),
        ] {
            let c = resolve(api, url, &openai);
            assert_eq!(c.api_key, None, "{url}");
            assert!(c.withheld_key.is_some(), "{url}");
        }
        // The own key variable is given for this configuration: it goes to whatever URL it names.
        let own = [(names::VLM_API_KEY, "sk-own"), (names::OPENAI_API_KEY, "sk-openai")];
        let c = resolve(Api::OpenAi, "https://llm.example/v1", &own);
        assert_eq!((c.api_key.as_deref(), c.withheld_key), (Some("sk-own"), None));
        assert_eq!(resolve(Api::OpenAi, "https://api.openai.com/v1", &own).api_key.as_deref(), Some("sk-own"));
    }

    #[test]
    fn a_url_without_a_model_is_an_error() {
        assert!(VlmConfig::resolve(Some("http://x".into()), None, None, env(&[])).is_err());
        assert!(
            VlmConfig::resolve(
                None,
                None,
                None,
                env(&[(names::VLM_URL, "u"), (names::VLM_MODEL, "m"), (names::VLM_API, "grok")])
            )
            .is_err()
        );
    }
}
