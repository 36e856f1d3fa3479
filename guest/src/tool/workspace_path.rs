//! Lexical confinement of a tool's path argument to the workspace, before the filesystem is
//! touched. The WASI preopen enforces the same boundary again (symlinks included).

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathError {
    Empty,
    Nul,
    Outside,
}

/// The workspace-relative form of `path` (`""` for the root itself). An absolute path must lie
/// under `root`; `..` may not climb above it.
pub fn confine(root: &str, path: &str) -> Result<String, PathError> {
    if path.is_empty() {
        return Err(PathError::Empty);
    }
    if path.contains('\0') {
        return Err(PathError::Nul);
    }
    let rest = if let Some(stripped) = path.strip_prefix('/') {
        let root = root.trim_end_matches('/');
        let root_rel = root.trim_start_matches('/');
        let stripped_components: Vec<&str> = stripped.split('/').filter(|c| !c.is_empty() && *c != ".").collect();
        let root_components: Vec<&str> = root_rel.split('/').filter(|c| !c.is_empty()).collect();
        if stripped_components.len() < root_components.len()
            || stripped_components[..root_components.len()] != root_components[..]
        {
            return Err(PathError::Outside);
        }
        stripped_components[root_components.len()..].join("/")
    } else {
        path.to_string()
    };
    let mut parts: Vec<&str> = Vec::new();
    for component in rest.split('/') {
        match component {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err(PathError::Outside);
                }
            }
            c => parts.push(c),
        }
    }
    Ok(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_stay_inside() {
        assert_eq!(confine("/ws", "a.png"), Ok("a.png".into()));
        assert_eq!(confine("/ws", "./dir/../a.png"), Ok("a.png".into()));
        assert_eq!(confine("/ws", "dir//a.png"), Ok("dir/a.png".into()));
        assert_eq!(confine("/ws", "."), Ok("".into()));
    }

    #[test]
    fn climbing_out_is_refused() {
        assert_eq!(confine("/ws", "../a.png"), Err(PathError::Outside));
        assert_eq!(confine("/ws", "dir/../../a.png"), Err(PathError::Outside));
        assert_eq!(confine("/ws", "/ws/../etc/passwd"), Err(PathError::Outside));
    }

    #[test]
    fn absolute_paths_must_lie_under_the_root() {
        assert_eq!(confine("/home/u/proj", "/home/u/proj/img/a.png"), Ok("img/a.png".into()));
        assert_eq!(confine("/home/u/proj/", "/home/u/proj"), Ok("".into()));
        assert_eq!(confine("/home/u/proj", "/etc/passwd"), Err(PathError::Outside));
        assert_eq!(confine("/home/u/proj", "/home/u/project/a.png"), Err(PathError::Outside));
        assert_eq!(confine("/home/u/proj", "/home/u"), Err(PathError::Outside));
    }

    #[test]
    fn empty_and_nul_are_refused() {
        assert_eq!(confine("/ws", ""), Err(PathError::Empty));
        assert_eq!(confine("/ws", "a\0.png"), Err(PathError::Nul));
    }
}
