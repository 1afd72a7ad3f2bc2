//! Text that looks like a credential (driver contract §5.3): private key
//! blocks, `password=`-style pairs, well-known token prefixes, JSON web
//! tokens, and a single 16–512 character word mixing three character
//! classes. The check errs towards refusing: a false alarm costs the agent
//! one read, a miss leaks a secret.

/// Whether `text` looks like it holds a credential.
pub fn looks_like_credential(text: &str) -> bool {
    has_private_key_block(text)
        || has_secret_pair(text)
        || text
            .split(|c: char| c.is_whitespace() || "\"'`,;()<>[]{}".contains(c))
            .any(|word| has_token_prefix(word) || is_jwt(word))
        || is_mixed_single_word(text)
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
            let rest = &lower[at + name.len()..];
            // The name may go on as an identifier (`secret_key`,
            // `access_token`, `auth_token`): skip to its end.
            let rest = rest.trim_start_matches(|c: char| c.is_ascii_alphanumeric() || c == '_');
            let rest = rest.trim_start_matches(['"', '\'', ' ', '\t']);
            let value = if *name == "bearer" {
                Some(rest)
            } else {
                rest.strip_prefix(['=', ':'])
            };
            value.is_some_and(|v| {
                v.trim_start_matches(['"', '\'', ' ', '\t'])
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

fn is_mixed_single_word(text: &str) -> bool {
    let word = text.trim();
    let len = word.chars().count();
    if !(16..=512).contains(&len) || word.chars().any(char::is_whitespace) {
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
        assert!(cred("Authorization: Bearer abcdef"));
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
    }
}
