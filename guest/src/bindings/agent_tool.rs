//! The `read_image` tool's capabilities, taken from the component's imports: the workspace is the
//! one WASI filesystem preopen (bindings generated from the world's own `wasi:filesystem` import);
//! the VLM and the output sink are the host's interfaces.

use super::wasi::filesystem::preopens;
use super::wasi::filesystem::types::{Descriptor, DescriptorFlags, DescriptorType, ErrorCode, OpenFlags, PathFlags};

use super::Component;
use super::exports::mediagate::gate::tool as wit;
use super::exports::mediagate::gate::workspace_admission as ws;
use super::mediagate::gate::{output, vlm};
use crate::tool::{self, EntryType, FsError, VlmError, reply::ChunkKind};

/// Read in pieces so a huge or growing file never lands in one allocation past the cap.
const READ_PIECE: u64 = 1 << 20;

struct PreopenWorkspace {
    dir: Descriptor,
    root: String,
}

impl PreopenWorkspace {
    fn open() -> Result<Self, tool::ToolError> {
        let mut dirs = preopens::get_directories();
        if dirs.len() != 1 {
            return Err(tool::ToolError {
                code: tool::ToolErrorCode::Io,
                message: format!(
                    "error: the host must grant exactly one workspace directory; it granted {}",
                    dirs.len()
                ),
            });
        }
        let (dir, root) = dirs.remove(0);
        Ok(PreopenWorkspace { dir, root })
    }
}

impl tool::Workspace for PreopenWorkspace {
    fn stat(&self, rel: &str) -> Result<(EntryType, u64), FsError> {
        let stat = self.dir.stat_at(PathFlags::SYMLINK_FOLLOW, rel).map_err(fs_error)?;
        let entry = match stat.type_ {
            DescriptorType::RegularFile => EntryType::File,
            DescriptorType::Directory => EntryType::Directory,
            DescriptorType::Fifo => EntryType::Other("a FIFO"),
            DescriptorType::Socket => EntryType::Other("a socket"),
            DescriptorType::CharacterDevice => EntryType::Other("a character device"),
            DescriptorType::BlockDevice => EntryType::Other("a block device"),
            DescriptorType::SymbolicLink => EntryType::Other("a symbolic link"),
            // wasmtime reports FIFOs and sockets as unknown.
            DescriptorType::Unknown => EntryType::Other("a FIFO, socket or other special file"),
        };
        Ok((entry, stat.size))
    }

    fn read(&self, rel: &str, max: u64) -> Result<Vec<u8>, FsError> {
        let file = self
            .dir
            .open_at(PathFlags::SYMLINK_FOLLOW, rel, OpenFlags::empty(), DescriptorFlags::READ)
            .map_err(fs_error)?;
        let mut bytes = Vec::new();
        loop {
            let want = READ_PIECE.min(max - bytes.len() as u64);
            if want == 0 {
                return Ok(bytes);
            }
            let (piece, eof) = file.read(want, bytes.len() as u64).map_err(fs_error)?;
            bytes.extend_from_slice(&piece);
            if eof || piece.is_empty() {
                return Ok(bytes);
            }
        }
    }

    fn root(&self) -> &str {
        &self.root
    }
}

fn fs_error(e: ErrorCode) -> FsError {
    match e {
        ErrorCode::NoEntry => FsError::NotFound,
        // The preopen refuses any resolution that leaves the directory (`..`, symlinks out).
        ErrorCode::NotPermitted => FsError::Escapes,
        ErrorCode::Access => FsError::Other("permission denied".into()),
        ErrorCode::Loop => FsError::Other("too many levels of symbolic links".into()),
        ErrorCode::NotDirectory => FsError::NotFound,
        other => FsError::Other(format!("{other:?}").to_lowercase()),
    }
}

struct HostVlm;
struct HostReply(vlm::Reply);

impl tool::Vlm for HostVlm {
    fn configured(&self) -> bool {
        vlm::configured()
    }

    fn provider(&self) -> crate::Provider {
        match vlm::api() {
            vlm::ApiDialect::Openai => crate::Provider::OpenAi,
            vlm::ApiDialect::Anthropic => crate::Provider::Anthropic,
        }
    }

    fn ask(&self, prompt: &str, mime: &str, data: Vec<u8>) -> Result<Box<dyn tool::Reply + '_>, VlmError> {
        // Base64 here: the import takes a string (wasmtime-py cannot take a few MB of `list<u8>`).
        let data = {
            use base64::Engine as _;
            base64::engine::general_purpose::STANDARD.encode(&data)
        };
        let image = vlm::Image { mime: mime.to_string(), data };
        let reply = vlm::ask(prompt, &image).map_err(vlm_error)?;
        Ok(Box::new(HostReply(reply)))
    }
}

impl tool::Reply for HostReply {
    fn next_chunk(&mut self) -> Result<Option<tool::Chunk>, VlmError> {
        let chunk = self.0.next_chunk().map_err(vlm_error)?;
        Ok(chunk.map(|c| tool::Chunk { kind: chunk_kind(c.kind), text: c.text }))
    }
}

fn chunk_kind(k: vlm::ChunkKind) -> ChunkKind {
    match k {
        vlm::ChunkKind::Content => ChunkKind::Content,
        vlm::ChunkKind::Reasoning => ChunkKind::Reasoning,
    }
}

fn vlm_error(e: vlm::VlmError) -> VlmError {
    match e {
        vlm::VlmError::NotConfigured => VlmError::NotConfigured,
        vlm::VlmError::Unreachable(m) => VlmError::Unreachable(m),
        vlm::VlmError::Refused(r) => VlmError::Refused { status: r.status, message: r.message },
        vlm::VlmError::TimedOut(m) => VlmError::TimedOut(m),
        vlm::VlmError::MalformedStream(m) => VlmError::MalformedStream(m),
        vlm::VlmError::StoppedEarly(m) => VlmError::StoppedEarly(m),
    }
}

struct HostSink;

impl tool::Sink for HostSink {
    fn write(&self, kind: ChunkKind, text: &str) {
        let kind = match kind {
            ChunkKind::Content => vlm::ChunkKind::Content,
            ChunkKind::Reasoning => vlm::ChunkKind::Reasoning,
        };
        output::write(kind, text);
    }
}

impl wit::Guest for Component {
    fn definition() -> wit::ToolDefinition {
        wit::ToolDefinition {
            name: tool::TOOL_NAME.to_string(),
            description: tool::TOOL_DESCRIPTION.to_string(),
            parameters_schema: tool::PARAMETERS_SCHEMA.to_string(),
        }
    }

    fn read_image(path: String, question: Option<String>, page: Option<u32>) -> Result<String, wit::ToolError> {
        let run = || {
            let workspace = PreopenWorkspace::open()?;
            tool::read_image(&workspace, &HostVlm, &HostSink, &path, question.as_deref(), page)
        };
        // The VLM check comes first inside `read_image`; a missing preopen must not hide it.
        if !vlm::configured() {
            return Err(tool_error(tool::ToolError {
                code: tool::ToolErrorCode::NoVlm,
                message: format!("error: {}", tool::NO_VLM_MESSAGE),
            }));
        }
        run().map_err(tool_error)
    }
}

fn tool_error(e: tool::ToolError) -> wit::ToolError {
    use tool::ToolErrorCode as C;
    let code = match e.code {
        C::NotFound => wit::ToolErrorCode::NotFound,
        C::NotAFile => wit::ToolErrorCode::NotAFile,
        C::OutsideWorkspace => wit::ToolErrorCode::OutsideWorkspace,
        C::TooLarge => wit::ToolErrorCode::TooLarge,
        C::NotAnImage => wit::ToolErrorCode::NotAnImage,
        C::Refused => wit::ToolErrorCode::Refused,
        C::NoVlm => wit::ToolErrorCode::NoVlm,
        C::VlmFailed => wit::ToolErrorCode::VlmFailed,
        C::Io => wit::ToolErrorCode::Io,
    };
    wit::ToolError { code, message: e.message }
}

/// The workspace entry: the file read through the preopen, then `entry.rs`'s one entry with its
/// path for a name (`entry::admit_file`), answered as `admission.admit` answers.
impl ws::Guest for Component {
    fn admit_file(
        file: ws::WorkspaceFile,
        options: super::admission::WitAdmitOptions,
    ) -> Result<super::admission::WitAdmission, ws::FileError> {
        use super::admission::WitPayload as Payload;
        use crate::entry::{self, FileError, InputError};
        let workspace = PreopenWorkspace::open().map_err(file_error)?;
        let input = entry::FileInput {
            path: &file.path,
            claimed_mime: file.claimed_mime.as_deref(),
            convert: file.convert,
            page: file.page,
        };
        let (answer, bytes) =
            entry::admit_file(&workspace, input, &super::admission::entry_options(options)).map_err(|e| match e {
                FileError::Unreadable(e) => file_error(e),
                FileError::Input(InputError::PageOfNonPdf(mime)) => ws::FileError {
                    code: ws::FileErrorCode::PageOfNonPdf,
                    message: format!("error: a page applies to PDFs; {} is {mime}", file.path),
                },
            })?;
        let input_len = bytes.len() as u64;
        Ok(match file.data {
            ws::AdmittedData::Payload => {
                let json = answer.json_value(input_len).to_string();
                // The caller has no bytes of its own: the file's are handed back when unchanged.
                super::admission::admission(answer, input_len, json, move |p| match p {
                    Payload::Unchanged => Payload::Bytes(bytes),
                    made => made,
                })
            }
            ws::AdmittedData::JsonBase64 => {
                let json = answer.json_value_with_data(&bytes).to_string();
                super::admission::admission(answer, input_len, json, |_| Payload::Unchanged)
            }
        })
    }
}

/// A workspace read that failed, as the workspace entry says it.
fn file_error(e: tool::ToolError) -> ws::FileError {
    use tool::ToolErrorCode as C;
    let code = match e.code {
        C::NotFound => ws::FileErrorCode::NotFound,
        C::NotAFile => ws::FileErrorCode::NotAFile,
        C::OutsideWorkspace => ws::FileErrorCode::OutsideWorkspace,
        C::TooLarge => ws::FileErrorCode::TooLarge,
        // A read answers only the codes above or an I/O error.
        C::NotAnImage | C::Refused | C::NoVlm | C::VlmFailed | C::Io => ws::FileErrorCode::Io,
    };
    ws::FileError { code, message: e.message }
}
