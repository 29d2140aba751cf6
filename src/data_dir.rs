//! The data folder's private files: the folder is the owner's only (0700),
//! and so are the generated JWT secret and the SQLite database (0600), which
//! holds password and refresh-token hashes. Files made by an older version,
//! or by hand, with wider modes are narrowed at start, with a warning.
//!
//! On platforms without Unix modes these functions only create what is missing.

use std::io;
use std::path::Path;

/// Mode of the data folder: the owner only.
pub const DIR_MODE: u32 = 0o700;
/// Mode of the secret and database files: the owner only.
pub const FILE_MODE: u32 = 0o600;

/// Creates `dir` (and missing parents) with mode 0700, or narrows an existing
/// one that others may read, write or enter. Returns whether a mode was changed.
///
/// # Errors
/// The folder cannot be created or its mode cannot be read or set.
pub fn ensure_private_dir(dir: &Path) -> io::Result<bool> {
    if !dir.exists() {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt;
            builder.mode(DIR_MODE);
        }
        builder.create(dir)?;
        return Ok(false);
    }
    narrow(dir, DIR_MODE, "data folder")
}

/// Creates `path` empty with mode 0600 if it does not exist (so that SQLite,
/// which gives its `-wal` and `-shm` files the database's mode, never makes
/// them wider), or narrows an existing one. Returns whether a mode was changed.
///
/// # Errors
/// The file cannot be created or its mode cannot be read or set.
pub fn ensure_private_file(path: &Path) -> io::Result<bool> {
    if !path.exists() {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(FILE_MODE);
        }
        match options.open(path) {
            Ok(_) => return Ok(false),
            // Made by someone else in between: check its mode below.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    narrow(path, FILE_MODE, "private file")
}

/// Narrows `path` to `mode` when its group or other bits are set, with a warning.
#[cfg(unix)]
fn narrow(path: &Path, mode: u32, what: &str) -> io::Result<bool> {
    use std::os::unix::fs::PermissionsExt;
    let current = std::fs::metadata(path)?.permissions().mode() & 0o7777;
    if current & 0o077 == 0 {
        return Ok(false);
    }
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))?;
    tracing::warn!(
        path = %path.display(),
        mode.before = format!("{current:o}"),
        mode.after = format!("{mode:o}"),
        "the {what} was readable by other users; narrowed its mode"
    );
    Ok(true)
}

#[cfg(not(unix))]
fn narrow(_path: &Path, _mode: u32, _what: &str) -> io::Result<bool> {
    Ok(false)
}

/// The Unix mode bits of `path` (tests and checks).
///
/// # Errors
/// The path cannot be read.
#[cfg(unix)]
pub fn mode_of(path: &Path) -> io::Result<u32> {
    use std::os::unix::fs::PermissionsExt;
    Ok(std::fs::metadata(path)?.permissions().mode() & 0o7777)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn temp() -> std::path::PathBuf {
        std::env::temp_dir().join(format!("uttt-modes-{}", crate::ids::record_id()))
    }

    #[test]
    fn a_new_folder_and_file_are_private() {
        let root = temp();
        let dir = root.join("a/b");
        assert!(!ensure_private_dir(&dir).unwrap());
        assert_eq!(mode_of(&dir).unwrap(), 0o700);
        let file = dir.join("uttt.db");
        assert!(!ensure_private_file(&file).unwrap());
        assert_eq!(mode_of(&file).unwrap(), 0o600);
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn wide_modes_are_narrowed_and_private_ones_left_alone() {
        let dir = temp();
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let file = dir.join("jwt-secret");
        std::fs::write(&file, "x").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(ensure_private_dir(&dir).unwrap());
        assert!(ensure_private_file(&file).unwrap());
        assert_eq!(mode_of(&dir).unwrap(), 0o700);
        assert_eq!(mode_of(&file).unwrap(), 0o600);
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "x",
            "contents kept"
        );
        // Already private: nothing to do.
        assert!(!ensure_private_dir(&dir).unwrap());
        assert!(!ensure_private_file(&file).unwrap());
        // Narrower than the target is private too.
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o400)).unwrap();
        assert!(!ensure_private_file(&file).unwrap());
        assert_eq!(mode_of(&file).unwrap(), 0o400);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
