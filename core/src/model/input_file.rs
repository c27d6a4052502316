//! Reading the files a scene names (meshes, custom WGSL): regular files only, so a scene
//! cannot point the reader at a device or a pipe that never ends (`/dev/zero`, a FIFO).

use std::io;
use std::path::Path;

/// The text of the regular file at `path` (symbolic links followed).
pub(crate) fn read_regular_file(path: &Path) -> io::Result<String> {
    let kind = std::fs::metadata(path)?.file_type();
    if !kind.is_file() {
        let what = if kind.is_dir() {
            "is a directory"
        } else {
            "is not a regular file (a device, pipe or socket)"
        };
        return Err(io::Error::new(io::ErrorKind::InvalidInput, what));
    }
    std::fs::read_to_string(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_and_directories_are_refused_without_reading() {
        // Reading /dev/zero to its end would never finish.
        let error = read_regular_file(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(
            error.to_string(),
            "is not a regular file (a device, pipe or socket)"
        );
        let error = read_regular_file(Path::new("/")).unwrap_err();
        assert_eq!(error.to_string(), "is a directory");
    }
}
