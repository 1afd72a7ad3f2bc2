//! Text that looks like a credential (driver contract §5.3): private key
//! blocks, `password=`-style pairs, well-known token prefixes, JSON web
//! tokens, and a single 16–512 character word mixing three character
//! classes. The check errs towards refusing: a false alarm costs the agent
//! one read, a miss leaks a secret.

/// Whether `text` looks like it holds a credential.
pub fn looks_like_credential(text: &str) -> bool {
    has_private_key_block(text)
        || has_secret_pair(text)
        || has_url_password(text)
        || text
            .split(|c: char| c.is_whitespace() || "\"'`,;()<>[]{}=:/@?&#".contains(c))
            .any(|word| has_token_prefix(word) || is_jwt(word))
        || is_mixed_single_word(text)
}

/// `scheme://user:password@host`.
fn has_url_password(text: &str) -> bool {
    text.match_indices("://").any(|(at, _)| {
        let authority = text[at + 3..]
            .split(|c: char| c == '/' || c.is_whitespace())
            .next()
            .unwrap_or("");
        authority.rsplit_once('@').is_some_and(|(userinfo, _)| {
            userinfo.split_once(':').is_some_and(|(_, p)| !p.is_empty())
        })
    })
}

fn has_private_key_block(text: &str) -> bool {
    text.contains("-----BEGIN") && text.contains("PRIVATE KEY")
}

/// Names whose value is a secret when followed by `=` or `:`.
const SECRET_NAMES: &[&str] = &[
    "password",
    "passwd",
    "pwd",
    "passphrase",
    "secret",
    "api_key",
    "api-key",
    "apikey",
    "access_key",
    "private_key",
    "token",
    "credential",
    "bearer",
];

fn has_secret_pair(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    SECRET_NAMES.iter().any(|name| {
        lower.match_indices(name).any(|(at, _)| {
            // A name starts a word (`db_password` counts, `mypassword`
            // does not) ...
            if lower[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_ascii_alphanumeric())
            {
                return false;
            }
            let rest = &lower[at + name.len()..];
            // ... and ends one, or goes on as an identifier after `_` or
            // `-` (`secret_key`, `token-id`), not as a longer word
            // (`secretary`, `tokens`).
            let rest = match rest.strip_prefix(['_', '-']) {
                Some(tail) => {
                    tail.trim_start_matches(|c: char| c.is_ascii_alphanumeric() || c == '_')
                }
                None if rest.starts_with(|c: char| c.is_ascii_alphanumeric()) => return false,
                None => rest,
            };
            let rest = rest.trim_start_matches(['"', '\'', ' ', '\t']);
            if *name == "bearer" {
                // `Bearer <token>`: the next word must look like a token.
                let token: String = rest.chars().take_while(|c| !c.is_whitespace()).collect();
                return token.len() >= 16
                    && token.chars().all(|c| base64ish(c) || ".~+/=".contains(c));
            }
            rest.strip_prefix(['=', ':']).is_some_and(|v| {
                v.trim_start()
                    .trim_start_matches(['"', '\''])
                    .chars()
                    .next()
                    .is_some_and(|c| !c.is_whitespace())
            })
        })
    })
}

fn token_chars(s: &str, min: usize, allowed: impl Fn(char) -> bool) -> bool {
    s.chars().count() >= min && s.chars().all(allowed)
}

fn base64ish(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

fn has_token_prefix(word: &str) -> bool {
    const PREFIXES: &[(&str, usize)] = &[
        ("ghp_", 20),
        ("gho_", 20),
        ("ghu_", 20),
        ("ghs_", 20),
        ("ghr_", 20),
        ("github_pat_", 20),
        ("glpat-", 20),
        ("xoxb-", 10),
        ("xoxp-", 10),
        ("xoxa-", 10),
        ("xoxr-", 10),
        ("xoxs-", 10),
        ("xapp-", 10),
        ("sk-", 20),
        ("sk_live_", 10),
        ("sk_test_", 10),
        ("rk_live_", 10),
        ("rk_test_", 10),
        ("whsec_", 10),
        ("AIza", 30),
    ];
    if PREFIXES.iter().any(|(prefix, min)| {
        word.strip_prefix(prefix)
            .is_some_and(|rest| token_chars(rest, *min, base64ish))
    }) {
        return true;
    }
    // AWS access key ids: a four-letter kind and 16 upper-case letters or
    // digits.
    const AWS: &[&str] = &[
        "AKIA", "ASIA", "AGPA", "AIDA", "AROA", "AIPA", "ANPA", "ANVA",
    ];
    AWS.iter().any(|prefix| {
        word.strip_prefix(prefix).is_some_and(|rest| {
            rest.len() == 16
                && rest
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
        })
    })
}

fn is_jwt(word: &str) -> bool {
    let parts: Vec<&str> = word.split('.').collect();
    parts.len() == 3
        && parts[0].starts_with("eyJ")
        && parts[..2].iter().all(|p| token_chars(p, 4, base64ish))
        && parts[2].chars().all(base64ish)
}

/// A URL without credentials in it (`user:pass@`) or an absolute path:
/// copied all the time, and never a secret by itself (a token inside one
/// is found by the other rules).
fn is_plain_url_or_path(word: &str) -> bool {
    let url = ["http://", "https://", "ftp://", "file://"]
        .iter()
        .any(|scheme| word.starts_with(scheme))
        && !word.contains('@');
    let path = (word.starts_with('/') || word.starts_with("~/"))
        && word
            .chars()
            .all(|c| c.is_alphanumeric() || "._-/~+".contains(c));
    url || path
}

fn is_mixed_single_word(text: &str) -> bool {
    let word = text.trim();
    let len = word.chars().count();
    if !(16..=512).contains(&len)
        || word.chars().any(char::is_whitespace)
        || is_plain_url_or_path(word)
    {
        return false;
    }
    let classes = [
        word.chars().any(|c| c.is_lowercase()),
        word.chars().any(|c| c.is_uppercase()),
        word.chars().any(|c| c.is_ascii_digit()),
        word.chars().any(|c| !c.is_alphanumeric()),
    ];
    classes.iter().filter(|&&has| has).count() >= 3
}

#[cfg(test)]
mod tests {
    use super::looks_like_credential as cred;

    #[test]
    fn refuses_what_the_contract_names() {
        assert!(cred(
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk=\n-----END OPENSSH PRIVATE KEY-----"
        ));
        assert!(cred("db_password=hunter2"));
        assert!(cred("export API_KEY='abc'"));
        assert!(cred("{\"client_secret\": \"x1\"}"));
        assert!(cred("token: abc"));
        assert!(cred("Authorization: Bearer abcdef0123456789xyz"));
        assert!(cred("use ghp_0123456789abcdefghijABCDEFGHIJ for CI"));
        assert!(cred("glpat-abcdefghij0123456789"));
        assert!(cred("xoxb-1234567890-abcdef"));
        assert!(cred("sk-proj-abcdefghijklmnopqrstuvwxyz012345"));
        assert!(cred("sk_live_51Habcdefghijk"));
        assert!(cred("AIzaSyA1234567890abcdefghijklmnopqrstu"));
        assert!(cred("key id AKIAIOSFODNN7EXAMPLE"));
        assert!(cred(
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
        ));
        assert!(cred("Tr0ub4dor&3xyzQQ!"));
        assert!(cred("  hQ7#kz9Lm2pX4vB8  "));
        // Tokens after `=`, inside URLs, values on the next line.
        assert!(cred(
            "Set OPENAI_KEY=sk-proj-abcdefghijklmnopqrstuvwx in .env"
        ));
        assert!(cred("export STRIPE=sk_live_51Habcdefghijk now"));
        assert!(cred("aws key=AKIAIOSFODNN7EXAMPLE here"));
        assert!(cred(
            "clone https://oauth2:glpat-abcdefghij0123456789@gitlab.com/x.git"
        ));
        assert!(cred("Username: alice\nPassword:\nhunter2"));
        assert!(cred("https://user:pass@example.com/repo"));
        assert!(cred("https://api.example.com/v1?access_token=abc123"));
    }

    #[test]
    fn passes_ordinary_text() {
        assert!(!cred("hello world"));
        assert!(!cred(
            "The quick brown fox jumps over the lazy dog 42 times."
        ));
        assert!(!cred("echo deskhand-paste > /tmp/out.txt"));
        assert!(!cred("abcdefghijklmnopqrstuvwxyz"));
        assert!(!cred("short1A!"));
        assert!(!cred("the password is something you choose"));
        assert!(!cred(&"line of ordinary words\n".repeat(200)));
        assert!(!cred("ask-me-anything and sk-short"));
        assert!(!cred("The bearer of this letter is a friend."));
        assert!(!cred("Secretary: Jane Doe"));
        assert!(!cred("Tokens: 512 per request"));
        assert!(!cred("https://example.com/docs/Page2?lang=en"));
        assert!(!cred("/home/alice/Reports/2026-Q3.pdf"));
    }
}
