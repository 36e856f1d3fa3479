//! The walks: a JSON document read for its media blocks, each judged by the gate where it sits and
//! admitted in place or replaced by words. `tool_result` is the tool-result seat and the walk both
//! seats share; `request` is the whole provider request, the same walk under the API's rules;
//! `batch` is one request of a Batch API file, its body judged as `request` judges it.

pub mod batch;
pub mod request;
pub mod tool_result;

use crate::options::Options;
use crate::profile::Api;
use request::RequestVerdict;

/// Admits a whole provider request in `api`'s dialect: a Message Batches body item by item, as a
/// batch file's requests are ([`batch`]); any other as one request ([`request`]).
pub fn admit_request(api: Api, request_json: &str, options: &Options) -> RequestVerdict {
    match api {
        Api::AnthropicBatch => batch::admit_message_batch(request_json, options),
        _ => request::admit_request(api, request_json, options),
    }
}
