//! Reading the audit log back (`deskhand audit tail`, the app's Activity
//! window): its default place and its last records, the rotated file's
//! first.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use deskhand_engine::audit::rotated_path;

use crate::HostError;
use crate::error::io;

/// Where `deskhand serve` and the app write the audit log by default.
pub fn default_path() -> PathBuf {
    crate::files::state_dir().join("audit.jsonl")
}

/// The last `n` lines of the log at `path` and its latest rotated file.
pub fn last_lines(path: &Path, n: usize) -> Result<Vec<String>, HostError> {
    let mut lines = read_lines(&rotated_path(path, 1))?;
    lines.extend(read_lines(path)?);
    let start = lines.len().saturating_sub(n);
    Ok(lines.split_off(start))
}

fn read_lines(path: &Path) -> Result<Vec<String>, HostError> {
    match File::open(path) {
        Ok(f) => BufReader::new(f)
            .lines()
            .collect::<Result<_, _>>()
            .map_err(io(format!("reading {}", path.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(io(format!("reading {}", path.display()))(e)),
    }
}
