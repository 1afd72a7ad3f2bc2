//! Installed applications on Linux: the `.desktop` entries of the XDG data
//! directories (the Desktop Entry spec: ids from their paths, the first
//! directory's entry wins, `Hidden=true` deletes one), each with the file
//! its `Exec` line runs and that file's identity (device + inode). An
//! entry in the person's own data directory, or one that names or is a
//! file their account can change, is marked so: the launch policy trusts
//! only the system's.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use deskhand_backend::{AppEntry, EntryArgs, FileId};

/// How deep entries are looked for below an `applications` directory
/// (`applications/kde4/foo.desktop` is `kde4-foo`).
const MAX_DEPTH: usize = 4;

/// Entries read from at most this many files: a bound on a directory an
/// agent could fill.
const MAX_ENTRIES: usize = 4096;

/// An entry file is read only up to this size.
const MAX_ENTRY_BYTES: u64 = 256 * 1024;

/// An installed application's entry as read from its file.
#[derive(Debug, Clone)]
pub(crate) struct Installed {
    /// What the engine sees of it.
    pub entry: AppEntry,
    /// Its `Exec` words, field codes left out, `%%` as `%`.
    pub words: Vec<String>,
    /// Where the caller's arguments go among `words` (the field code's
    /// place), when it has a field code for files or URLs.
    pub args_at: Option<usize>,
    /// The program its `Exec` line runs, when it is installed.
    pub program: Option<PathBuf>,
    /// That program's identity.
    pub file: Option<FileId>,
    /// `Hidden=true`: deleted, but it still hides the same id below.
    pub hidden: bool,
}

impl Installed {
    /// The program's argv with `args` where its field code was.
    pub fn argv(&self, args: &[String]) -> Vec<String> {
        let mut argv = self.words[1..].to_vec();
        let at = self
            .args_at
            .map_or(argv.len(), |i| i.saturating_sub(1).min(argv.len()));
        argv.splice(at..at, args.iter().cloned());
        argv
    }
}

/// The entries read last, and when.
#[derive(Default)]
pub(crate) struct EntryCache {
    read: Option<(Instant, Vec<Installed>)>,
}

impl EntryCache {
    /// The installed entries, read again when the last read is older than
    /// `max_age` (a launch always reads them afresh).
    pub fn entries(&mut self, max_age: Duration) -> &[Installed] {
        let fresh = self
            .read
            .as_ref()
            .is_some_and(|(at, _)| at.elapsed() < max_age);
        if !fresh {
            self.read = Some((Instant::now(), read_all()));
        }
        self.read
            .as_ref()
            .map(|(_, e)| e.as_slice())
            .unwrap_or_default()
    }
}

/// The identity of the file at `path`, symlinks followed.
pub(crate) fn file_id(path: &Path) -> Option<FileId> {
    let meta = std::fs::metadata(path).ok()?;
    Some(FileId {
        device: meta.dev(),
        inode: meta.ino(),
    })
}

pub(crate) fn is_executable(p: &Path) -> bool {
    p.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// `name` resolved through `$PATH` when it has no slash.
pub(crate) fn find_program(name: &str) -> Option<PathBuf> {
    if name.contains('/') {
        // Absolute only: a relative path would depend on deskhand's cwd.
        let p = PathBuf::from(name);
        return (p.is_absolute() && is_executable(&p)).then_some(p);
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|p| is_executable(p))
}

/// The person's home directory, when it is an absolute path.
fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
}

/// Whether the file at `path` is one the person's account can change:
/// below their `home` (symlinks resolved), or theirs or open to others'
/// writes (see `deskhand_files::changeable_by_us`).
pub(crate) fn persons_own(path: &Path, home: Option<&Path>) -> bool {
    let below_home = home
        .zip(std::fs::canonicalize(path).ok())
        .is_some_and(|(h, p)| p.starts_with(h));
    below_home || deskhand_files::changeable_by_us(path)
}

/// The directories `.desktop` files are looked up in, most important
/// first, each with whether it is the person's own data directory.
fn application_dirs() -> Vec<(PathBuf, bool)> {
    // Only absolute directories: with HOME unset, `.local/share` would
    // resolve against deskhand's working directory.
    let data_home = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| home().map(|h| h.join(".local/share")));
    let data_dirs = std::env::var("XDG_DATA_DIRS")
        .ok()
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| "/usr/local/share:/usr/share".into());
    let system = data_dirs
        .split(':')
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .map(|d| (d, false));
    data_home
        .map(|d| (d, true))
        .into_iter()
        .chain(system)
        .map(|(d, own)| (d.join("applications"), own))
        .collect()
}

/// Whether `id` (without `.desktop`) could name an entry.
pub(crate) fn valid_id(id: &str) -> bool {
    !(id.is_empty() || id.contains('/') || id.contains("..") || id.contains('\0'))
}

/// Every installed entry, each id once (the most important directory's).
fn read_all() -> Vec<Installed> {
    let mut files = Vec::new();
    for (dir, own) in application_dirs() {
        let mut found = Vec::new();
        collect(&dir, "", 0, &mut found);
        files.extend(found.into_iter().map(|(id, path)| (id, path, own)));
    }
    let mut seen = std::collections::HashSet::new();
    let home = home().and_then(|h| std::fs::canonicalize(h).ok());
    files
        .into_iter()
        .filter(|(id, _, _)| seen.insert(id.clone()))
        .take(MAX_ENTRIES)
        .filter_map(|(id, path, own)| {
            let mut e = read_entry(&id, &path)?;
            e.entry.user_writable = own
                || persons_own(&path, home.as_deref())
                || e.program
                    .as_deref()
                    .is_some_and(|p| persons_own(p, home.as_deref()));
            Some(e)
        })
        .collect()
}

/// The `(id, path)` of every `.desktop` file below `dir`.
fn collect(dir: &Path, prefix: &str, depth: usize, out: &mut Vec<(String, PathBuf)>) {
    let Ok(list) = std::fs::read_dir(dir) else {
        return;
    };
    let mut list: Vec<_> = list.flatten().collect();
    list.sort_by_key(|e| e.file_name());
    for e in list {
        let Some(name) = e.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        let path = e.path();
        if path.is_dir() && depth < MAX_DEPTH {
            collect(&path, &format!("{prefix}{name}-"), depth + 1, out);
        } else if let Some(stem) = name.strip_suffix(".desktop") {
            out.push((format!("{prefix}{stem}"), path));
        }
        if out.len() >= MAX_ENTRIES {
            return;
        }
    }
}

/// The entry `id` in `path`, when it has an `Exec` line.
pub(crate) fn read_entry(id: &str, path: &Path) -> Option<Installed> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)
        .ok()?
        .take(MAX_ENTRY_BYTES)
        .read_to_string(&mut text)
        .ok()?;
    parse_entry(id, &text)
}

/// Parses the `[Desktop Entry]` group of an entry's text.
pub(crate) fn parse_entry(id: &str, text: &str) -> Option<Installed> {
    let (mut exec, mut terminal, mut hidden, mut categories) = (None, false, false, Vec::new());
    let mut in_entry = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_entry = line == "[Desktop Entry]";
            continue;
        }
        let Some((key, value)) = line.split_once('=').filter(|_| in_entry) else {
            continue;
        };
        let value = value.trim();
        match key.trim() {
            "Exec" => exec = Some(value.to_owned()),
            "Terminal" => terminal = value == "true",
            "Hidden" => hidden = value == "true",
            "Categories" => {
                categories = value
                    .split(';')
                    .filter(|c| !c.is_empty())
                    .map(str::to_owned)
                    .collect();
            }
            _ => {}
        }
    }
    let (words, args_at, args) = exec_line(&exec?);
    let program = words.first().and_then(|w| find_program(w));
    Some(Installed {
        entry: AppEntry {
            id: id.to_owned(),
            terminal,
            categories,
            args,
            // Judged with the file's place by the caller.
            user_writable: true,
        },
        file: program.as_deref().and_then(file_id),
        program,
        words,
        args_at,
        hidden,
    })
    .filter(|e| !e.words.is_empty())
}

/// An `Exec` value's words (field codes left out, `%%` as `%`), where
/// the caller's arguments go, and which it accepts.
fn exec_line(exec: &str) -> (Vec<String>, Option<usize>, EntryArgs) {
    let (mut words, mut at, mut args) = (Vec::new(), None, EntryArgs::None);
    for word in split_exec(exec) {
        match word.as_str() {
            "%f" | "%u" | "%F" | "%U" if at.is_none() => {
                at = Some(words.len());
                args = if word == "%f" || word == "%u" {
                    EntryArgs::One
                } else {
                    EntryArgs::Many
                };
            }
            w if w.len() == 2 && w.starts_with('%') && w != "%%" => {}
            w => words.push(w.replace("%%", "%")),
        }
    }
    (words, at, args)
}

/// Splits an `Exec` value: whitespace-separated words, double quotes with
/// backslash escapes.
fn split_exec(exec: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    let mut started = false;
    let mut chars = exec.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                quoted = !quoted;
                started = true;
            }
            '\\' if quoted => {
                if let Some(n) = chars.next() {
                    word.push(n);
                }
            }
            c if c.is_whitespace() && !quoted => {
                if started {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            c => {
                word.push(c);
                started = true;
            }
        }
    }
    if started {
        words.push(word);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exec_lines_split_like_the_spec_says() {
        let words = |e: &str| exec_line(e).0;
        assert_eq!(words("xterm"), ["xterm"]);
        assert_eq!(words("gedit %U"), ["gedit"]);
        assert_eq!(
            words(r#""/opt/my app/run" --name "a \"b\"" 100%% %f %i"#),
            ["/opt/my app/run", "--name", r#"a "b""#, "100%"]
        );
        assert!(words("   ").is_empty());
    }

    #[test]
    fn field_codes_say_what_an_entry_accepts_and_where() {
        let e = parse_entry(
            "im",
            "[Desktop Entry]\nExec=/usr/bin/display -nostdin %F --end\nCategories=Graphics;\n",
        )
        .expect("entry");
        assert_eq!(e.entry.args, EntryArgs::Many);
        assert_eq!(e.entry.categories, ["Graphics"]);
        assert_eq!(
            e.argv(&["/a.png".into(), "/b.png".into()]),
            ["-nostdin", "/a.png", "/b.png", "--end"]
        );
        let one = parse_entry("v", "[Desktop Entry]\nExec=viewer %u\n").expect("entry");
        assert_eq!(one.entry.args, EntryArgs::One);
        let none = parse_entry("x", "[Desktop Entry]\nExec=xterm\nTerminal=false\n").expect("x");
        assert_eq!(none.entry.args, EntryArgs::None);
        assert_eq!(
            none.argv(&["-e".into()]),
            ["-e"],
            "appended: the policy refuses it"
        );
        let vim = parse_entry(
            "vim",
            "[Desktop Action x]\nExec=other\n[Desktop Entry]\nTerminal = true\nExec = vim %F\n",
        )
        .expect("vim");
        assert!(vim.entry.terminal);
        assert_eq!(vim.words, ["vim"]);
        assert!(parse_entry("n", "[Desktop Entry]\nName=no exec\n").is_none());
        assert!(parse_entry("n", "[Other]\nExec=xterm\n").is_none());
    }

    #[test]
    fn files_below_the_home_or_the_persons_own_are_the_persons() {
        let home = std::env::temp_dir().join(format!("dh-home-{}", std::process::id()));
        std::fs::create_dir_all(home.join("bin")).expect("dir");
        let tool = home.join("bin/tool");
        std::fs::write(&tool, "x").expect("write");
        let home = std::fs::canonicalize(&home).expect("canonical");
        assert!(persons_own(&tool, Some(&home)), "below the home");
        let system = Path::new("/usr/bin/env");
        assert!(
            !persons_own(system, Some(&home)),
            "root's, outside the home"
        );
        assert!(
            persons_own(system, Some(Path::new("/usr"))),
            "below a root home"
        );
        let _ = std::fs::remove_dir_all(&home);
    }

    #[test]
    fn a_file_is_itself_under_any_name() {
        let dir = std::env::temp_dir().join(format!("dh-entries-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let (a, link, copy) = (dir.join("a"), dir.join("hard"), dir.join("copy"));
        std::fs::write(&a, "x").expect("write");
        let _ = std::fs::remove_file(&link);
        std::fs::hard_link(&a, &link).expect("link");
        std::fs::copy(&a, &copy).expect("copy");
        assert_eq!(file_id(&a), file_id(&link));
        assert_ne!(file_id(&a), file_id(&copy));
        assert_eq!(file_id(&dir.join("absent")), None);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
