//! Where `mediagate mcp` reads from: `--workspace`, else the roots the client offers, else the
//! directory it was started in — never `/` or the home directory unless `--workspace` names it
//! (a client's root of `/` or of the home directory is refused like the start directory). Each
//! directory is resolved and opened once ([`WorkspaceDir`]): `--workspace` at start, a legacy
//! client's roots when listed; later calls never look the path up again.
//!
//! The client's roots arrive two ways, by protocol version:
//! - up to 2025-11-25 the server asks (`roots/list`) after `notifications/initialized` and again on
//!   every `notifications/roots/list_changed`; a call waits for the answer in flight;
//! - from 2026-07-28 (no server-to-client requests) a call whose client declares `roots` is answered
//!   with an `InputRequiredResult` asking for `roots/list`, and the client retries with the list.
//!
//! SEP-2577 deprecates roots, and rmcp marks its roots types so; clients still offer them, and they
//! are the one way a client says which directory is the project.
#![allow(deprecated)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mediagate::tool::WorkspaceDir;
use rmcp::model::{InputRequest, InputRequiredResult, InputResponses, ListRootsRequest, ListRootsResult};
use rmcp::{Peer, RoleServer};
use tokio::sync::watch;

/// How long a call waits for the client's answer to `roots/list`.
const ROOTS_ANSWER_TIMEOUT: Duration = Duration::from_secs(30);

/// At most this many calls wait for the client's roots at once, holding at most
/// [`ROOTS_MAX_HELD_BYTES`] of arguments between them; a call past either is refused in words (a
/// client that declares roots and never answers must not make the server hold every call it sends).
pub const ROOTS_MAX_WAITING: usize = 8;
pub const ROOTS_MAX_HELD_BYTES: usize = 8 << 20;

/// The key of the `roots/list` input request in an `InputRequiredResult`.
const ROOTS_INPUT_KEY: &str = "roots";

/// Where the tools read from.
pub enum Workspace {
    /// `--workspace DIR`: always this directory, whatever the client offers.
    Fixed(WorkspaceDir),
    /// No `--workspace`: the client's roots, when it offers them.
    FromClient(ClientRoots),
}

/// What a call needs before it can run, when it cannot run yet.
pub enum Unresolved {
    /// Ask the client for its roots and retry (protocol 2026-07-28 and later).
    AskForRoots(InputRequiredResult),
    /// No directory may be read; the words say why and what to do.
    Refused(String),
}

/// The roots of a legacy session as last listed.
#[derive(Clone, Debug)]
enum Listed {
    /// The client has not said yet whether it offers roots (no `initialized` yet).
    NotYet,
    /// It does not offer roots: the start directory stands in, if it may.
    NoRoots,
    /// A `roots/list` is in flight.
    Asking,
    Roots(Vec<WorkspaceDir>),
    Failed(String),
}

pub struct ClientRoots {
    /// The directory the server was started in, or why it may not be served.
    start_dir: Result<WorkspaceDir, String>,
    /// The home directory, resolved: a root the client offers there is refused.
    home: Option<PathBuf>,
    listed: watch::Sender<Listed>,
    /// Bumped on every new `roots/list`, so an older answer arriving late never wins.
    generation: AtomicU64,
    /// Calls waiting for the roots, and the bytes of arguments they hold.
    waiting: Arc<Mutex<(usize, usize)>>,
}

/// A call's place among those waiting for the roots; given back when it is dropped.
struct WaitingForRoots {
    waiting: Arc<Mutex<(usize, usize)>>,
    held: usize,
}

impl WaitingForRoots {
    fn take(waiting: &Arc<Mutex<(usize, usize)>>, held: usize) -> Result<Self, String> {
        let mut now = waiting.lock().expect("never poisoned");
        if now.0 >= ROOTS_MAX_WAITING || now.1.saturating_add(held) > ROOTS_MAX_HELD_BYTES {
            return Err(format!(
                "error: the client has not listed its roots yet, and {} calls ({} bytes of arguments) already wait \
                 for them, the most this server holds ({ROOTS_MAX_WAITING} calls, {ROOTS_MAX_HELD_BYTES} bytes); \
                 answer roots/list, or try again shortly",
                now.0, now.1
            ));
        }
        now.0 += 1;
        now.1 += held;
        Ok(WaitingForRoots { waiting: Arc::clone(waiting), held })
    }
}

impl Drop for WaitingForRoots {
    fn drop(&mut self) {
        let mut now = self.waiting.lock().expect("never poisoned");
        now.0 -= 1;
        now.1 -= self.held;
    }
}

impl Workspace {
    /// `--workspace` when given; otherwise the client's roots, with the start directory standing in
    /// for a client that offers none unless it is `/` or the home directory.
    pub fn new(explicit: Option<&Path>) -> Result<Workspace, String> {
        if let Some(dir) = explicit {
            return WorkspaceDir::open(dir).map(Workspace::Fixed).map_err(|e| plain(e.message));
        }
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .and_then(|h| std::fs::canonicalize(PathBuf::from(h)).ok());
        let start_dir = match std::env::current_dir().and_then(std::fs::canonicalize) {
            Ok(dir) => guard_start_dir(dir, home.as_deref()).and_then(|dir| {
                WorkspaceDir::open(&dir).map_err(|e| {
                    format!("the directory the server was started in cannot be opened: {}", plain(e.message))
                })
            }),
            Err(e) => Err(format!("the directory the server was started in cannot be opened: {e}")),
        };
        Ok(Workspace::FromClient(ClientRoots {
            start_dir,
            home,
            listed: watch::Sender::new(Listed::NotYet),
            generation: AtomicU64::new(0),
            waiting: Arc::default(),
        }))
    }

    /// For the status line.
    pub fn describe(&self) -> String {
        match self {
            Workspace::Fixed(dir) => dir.path().display().to_string(),
            Workspace::FromClient(c) => match &c.start_dir {
                Ok(dir) => format!("the client's roots (else {})", dir.path().display()),
                Err(_) => "the client's roots (none else: started in / or the home directory)".to_string(),
            },
        }
    }

    /// A legacy client's `initialize`: `Err` with the words of the refusal when it offers no roots
    /// and nothing else may be served.
    pub fn on_initialize(&self, client_offers_roots: bool) -> Result<(), String> {
        match self {
            Workspace::FromClient(c) if !client_offers_roots => {
                c.listed.send_replace(Listed::NoRoots);
                c.start_dir.as_ref().map(|_| ()).map_err(Clone::clone)
            }
            _ => Ok(()),
        }
    }

    /// A legacy session began (`notifications/initialized`) or its roots changed: list them again.
    pub fn refresh(self: &Arc<Self>, peer: Peer<RoleServer>) {
        let Workspace::FromClient(c) = &**self else { return };
        if matches!(*c.listed.borrow(), Listed::NoRoots) {
            return;
        }
        let generation = c.generation.fetch_add(1, Ordering::SeqCst) + 1;
        c.listed.send_replace(Listed::Asking);
        let this = Arc::clone(self);
        tokio::spawn(async move {
            let Workspace::FromClient(c) = &*this else { return };
            let listed = match tokio::time::timeout(ROOTS_ANSWER_TIMEOUT, peer.list_roots()).await {
                Ok(Ok(result)) => match roots_of(&result, c.home.as_deref()) {
                    Ok(roots) => Listed::Roots(roots),
                    Err(e) => Listed::Failed(e),
                },
                Ok(Err(e)) => Listed::Failed(format!("the client did not list its roots: {e}")),
                Err(_) => Listed::Failed(format!(
                    "the client did not answer roots/list within {} s",
                    ROOTS_ANSWER_TIMEOUT.as_secs()
                )),
            };
            if c.generation.load(Ordering::SeqCst) == generation {
                c.listed.send_replace(listed);
            }
        });
    }

    /// The directory a call on `path` reads from.
    ///
    /// `stateless` is a 2026-07-28 request (roots come in `input_responses`, asked for with an
    /// `InputRequiredResult`); `client_offers_roots` its declared capability.
    pub async fn for_call(
        &self,
        path: &str,
        held: usize,
        stateless: bool,
        client_offers_roots: bool,
        input_responses: Option<&InputResponses>,
    ) -> Result<WorkspaceDir, Unresolved> {
        let c = match self {
            Workspace::Fixed(dir) => return Ok(dir.clone()),
            Workspace::FromClient(c) => c,
        };
        let roots = if stateless {
            if let Some(answer) = input_responses.and_then(|r| r.get(ROOTS_INPUT_KEY)) {
                let result: ListRootsResult = serde_json::from_value(answer.clone()).map_err(|e| {
                    Unresolved::Refused(format!("error: the client's answer to roots/list is not a list of roots: {e}"))
                })?;
                roots_of(&result, c.home.as_deref()).map_err(|e| Unresolved::Refused(format!("error: {e}")))?
            } else if client_offers_roots {
                let asks = [(ROOTS_INPUT_KEY.to_string(), InputRequest::ListRoots(ListRootsRequest::default()))];
                return Err(Unresolved::AskForRoots(InputRequiredResult::from_input_requests(asks.into())));
            } else {
                return c.start_dir.clone().map_err(|e| Unresolved::Refused(format!("error: {e}")));
            }
        } else {
            let mut listed = c.listed.subscribe();
            let settled_now = !matches!(*listed.borrow(), Listed::Asking | Listed::NotYet);
            let _place = match settled_now {
                true => None,
                false => Some(WaitingForRoots::take(&c.waiting, held).map_err(Unresolved::Refused)?),
            };
            let settled = tokio::time::timeout(
                ROOTS_ANSWER_TIMEOUT,
                listed.wait_for(|l| !matches!(l, Listed::Asking | Listed::NotYet)),
            )
            .await;
            let settled = match settled {
                Ok(Ok(l)) => l.clone(),
                _ => return Err(Unresolved::Refused("error: the client's roots are not known yet; try again".into())),
            };
            match settled {
                Listed::Roots(roots) => roots,
                Listed::NoRoots => return c.start_dir.clone().map_err(|e| Unresolved::Refused(format!("error: {e}"))),
                Listed::Failed(e) => return Err(Unresolved::Refused(format!("error: no workspace: {e}"))),
                Listed::NotYet | Listed::Asking => unreachable!("waited for a settled state"),
            }
        };
        Ok(root_for(&roots, path).clone())
    }
}

/// A tool error's words without their `error: ` (the caller adds its own).
fn plain(message: String) -> String {
    message.strip_prefix("error: ").map(str::to_string).unwrap_or(message)
}

/// Why `dir` may not be served without `--workspace`: the filesystem root or the home directory
/// would hand a model the whole disk or every secret in the home directory.
fn too_broad(dir: &Path, home: Option<&Path>) -> Option<&'static str> {
    if dir.parent().is_none() {
        Some("the filesystem root")
    } else if home == Some(dir) {
        Some("the home directory")
    } else {
        None
    }
}

/// The start directory, unless it is `/` or `home`: serving those by default would hand a model
/// the whole disk or every secret in the home directory.
fn guard_start_dir(dir: PathBuf, home: Option<&Path>) -> Result<PathBuf, String> {
    let Some(what) = too_broad(&dir, home) else { return Ok(dir) };
    Err(format!(
        "no workspace: the client offers no roots and the server was started in {} ({what}), which it will not \
         serve by default; start it with `--workspace DIR` (an explicit `--workspace` may name any directory), or \
         from the project's directory",
        dir.display()
    ))
}

/// The `file://` roots as directories, opened; others (ones that do not exist, `/`, the home
/// directory `home`) are named in the error when none is left.
fn roots_of(result: &ListRootsResult, home: Option<&Path>) -> Result<Vec<WorkspaceDir>, String> {
    let mut roots = Vec::new();
    let mut skipped = Vec::new();
    let mut too_broad_roots = Vec::new();
    for root in &result.roots {
        let dir = url::Url::parse(&root.uri)
            .ok()
            .filter(|u| u.scheme() == "file")
            .and_then(|u| u.to_file_path().ok())
            .and_then(|p| std::fs::canonicalize(p).ok())
            .filter(|p| p.is_dir());
        match dir {
            Some(dir) => match too_broad(&dir, home) {
                Some(what) => too_broad_roots.push(format!("{} ({what})", root.uri)),
                None => match WorkspaceDir::open(&dir) {
                    Ok(dir) => roots.push(dir),
                    Err(_) => skipped.push(root.uri.clone()),
                },
            },
            None => skipped.push(root.uri.clone()),
        }
    }
    if roots.is_empty() {
        return Err(if !too_broad_roots.is_empty() {
            format!(
                "the client's roots name {}, which the server will not serve unless told to: add the project's \
                 directory as a root in the client, or start the server with `--workspace DIR` (an explicit \
                 `--workspace` may name any directory)",
                too_broad_roots.join(" and ")
            )
        } else if skipped.is_empty() {
            "the client offers no roots; add one in the client, or start the server with `--workspace DIR`".into()
        } else {
            format!(
                "none of the client's roots is a local directory ({}); start the server with `--workspace DIR`",
                skipped.join(", ")
            )
        });
    }
    Ok(roots)
}

/// The root an absolute `path` lies in (the deepest), else the first: relative paths are relative to it.
fn root_for<'a>(roots: &'a [WorkspaceDir], path: &str) -> &'a WorkspaceDir {
    let path = Path::new(path);
    let holding = roots.iter().filter(|r| path.is_absolute() && path.starts_with(r.path()));
    holding.max_by_key(|r| r.path().components().count()).unwrap_or(&roots[0])
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::Root;

    #[test]
    fn the_root_and_home_are_never_served_by_default() {
        let home = tempfile::tempdir().unwrap();
        let home_path = std::fs::canonicalize(home.path()).unwrap();
        assert!(guard_start_dir(PathBuf::from("/"), Some(&home_path)).unwrap_err().contains("filesystem root"));
        let e = guard_start_dir(home_path.clone(), Some(&home_path)).unwrap_err();
        assert!(e.contains("home directory") && e.contains("--workspace"), "{e}");
        let project = home_path.join("project");
        std::fs::create_dir(&project).unwrap();
        assert_eq!(guard_start_dir(project.clone(), Some(&home_path)).unwrap(), project);
    }

    #[test]
    fn file_roots_become_directories_and_the_rest_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let canonical = std::fs::canonicalize(dir.path()).unwrap();
        let uri = url::Url::from_directory_path(&canonical).unwrap().to_string();
        let listed = ListRootsResult::new(vec![Root::new("https://example.com/repo"), Root::new(uri)]);
        let roots = roots_of(&listed, None).unwrap();
        assert_eq!(roots.iter().map(|r| r.path()).collect::<Vec<_>>(), vec![canonical.as_path()]);
        let e = roots_of(&ListRootsResult::new(vec![Root::new("file:///no/such/dir")]), None).unwrap_err();
        assert!(e.contains("file:///no/such/dir"), "{e}");
        assert!(roots_of(&ListRootsResult::new(vec![]), None).unwrap_err().contains("offers no roots"));
    }

    #[test]
    fn a_root_of_slash_or_home_is_refused_like_the_start_directory() {
        let home = tempfile::tempdir().unwrap();
        let home_path = std::fs::canonicalize(home.path()).unwrap();
        let project = home_path.join("project");
        std::fs::create_dir(&project).unwrap();
        let uri = |p: &Path| url::Url::from_directory_path(p).unwrap().to_string();
        for listed in [
            vec![Root::new("file:///")],
            vec![Root::new(uri(&home_path))],
            vec![Root::new("file:///"), Root::new(uri(&home_path))],
        ] {
            let e = roots_of(&ListRootsResult::new(listed), Some(&home_path)).unwrap_err();
            assert!(e.contains("will not serve") && e.contains("--workspace"), "{e}");
        }
        // Beside a project root, they are left out and the project is served.
        let listed = ListRootsResult::new(vec![Root::new("file:///"), Root::new(uri(&project))]);
        let roots = roots_of(&listed, Some(&home_path)).unwrap();
        assert_eq!(roots.iter().map(|r| r.path()).collect::<Vec<_>>(), vec![project.as_path()]);
    }

    #[test]
    fn an_absolute_path_picks_the_deepest_root_that_holds_it() {
        let top = tempfile::tempdir().unwrap();
        let top = std::fs::canonicalize(top.path()).unwrap();
        for d in ["a", "b", "b/c"] {
            std::fs::create_dir(top.join(d)).unwrap();
        }
        let roots: Vec<_> = ["a", "b", "b/c"].iter().map(|d| WorkspaceDir::open(&top.join(d)).unwrap()).collect();
        let at = |p: &str| root_for(&roots, p).path().strip_prefix(&top).unwrap().to_path_buf();
        assert_eq!(at("x.png"), Path::new("a"));
        assert_eq!(at(&format!("{}/b/y.png", top.display())), Path::new("b"));
        assert_eq!(at(&format!("{}/b/c/z.png", top.display())), Path::new("b/c"));
        assert_eq!(at("/elsewhere/z.png"), Path::new("a"));
    }
}
