//! The walks: a JSON document read for its media blocks, each judged by the gate where it sits and
//! admitted in place or replaced by words. `tool_result` is the tool-result seat and the walk both
//! seats share; `request` is the whole provider request, the same walk under the API's rules;
//! `batch` is one request of a Batch API file, its body judged as `request` judges it.

pub mod batch;
pub mod request;
pub mod tool_result;
