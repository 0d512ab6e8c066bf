//! `${VAR}` and `${VAR:-default}` in `.mcp.json` values, as Claude Code expands them.

/// Expands every `${NAME}` and `${NAME:-default}` in `text` with `lookup`. A `${` without its
/// `}` stays as written. Returns the names that were unset and had no default (then the text
/// cannot be used).
pub fn expand_vars(
    text: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<String, Vec<String>> {
    let mut out = String::with_capacity(text.len());
    let mut missing = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            rest = "";
            break;
        };
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inner, None),
        };
        // An empty value counts as unset, as in the shell's `:-`.
        match (lookup(name).filter(|v| !v.is_empty()), default) {
            (Some(value), _) => out.push_str(&value),
            (None, Some(default)) => out.push_str(default),
            (None, None) => missing.push(name.to_string()),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    if missing.is_empty() {
        Ok(out)
    } else {
        Err(missing)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "HOME" => Some("/home/me".into()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    #[test]
    fn variables_and_defaults_expand() {
        assert_eq!(expand_vars("${HOME}/x", &env).unwrap(), "/home/me/x");
        assert_eq!(expand_vars("${NOPE:-/tmp}/y", &env).unwrap(), "/tmp/y");
        assert_eq!(expand_vars("${EMPTY:-d}", &env).unwrap(), "d");
        assert_eq!(expand_vars("${HOME:-d}", &env).unwrap(), "/home/me");
        assert_eq!(
            expand_vars("a ${HOME} b ${HOME}", &env).unwrap(),
            "a /home/me b /home/me"
        );
        assert_eq!(expand_vars("plain $HOME", &env).unwrap(), "plain $HOME");
        assert_eq!(expand_vars("open ${HOME", &env).unwrap(), "open ${HOME");
        assert_eq!(expand_vars("${:-x}", &env).unwrap(), "x");
    }

    #[test]
    fn unset_variables_without_default_are_named() {
        assert_eq!(
            expand_vars("${A}-${HOME}-${B}", &env).unwrap_err(),
            vec!["A".to_string(), "B".to_string()]
        );
    }
}
