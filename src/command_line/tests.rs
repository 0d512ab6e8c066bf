use super::*;

/// The words of each part, or why the line cannot be read.
fn parts(line: &str) -> Result<Vec<Vec<String>>, Unreadable> {
    split(line).map(|parts| {
        parts
            .iter()
            .map(|p| p.texts().into_iter().map(str::to_string).collect())
            .collect()
    })
}

fn words(list: &[&[&str]]) -> Vec<Vec<String>> {
    list.iter()
        .map(|p| p.iter().map(|w| w.to_string()).collect())
        .collect()
}

#[test]
fn a_plain_command_is_its_words() {
    assert_eq!(
        parts("cargo test --all  -q").unwrap(),
        words(&[&["cargo", "test", "--all", "-q"]])
    );
}

#[test]
fn every_operator_splits_the_line() {
    assert_eq!(
        parts("cargo test; curl x").unwrap(),
        words(&[&["cargo", "test"], &["curl", "x"]])
    );
    assert_eq!(
        parts("cargo test && rm -rf ~").unwrap(),
        words(&[&["cargo", "test"], &["rm", "-rf", "~"]])
    );
    assert_eq!(
        parts("cargo test | sh").unwrap(),
        words(&[&["cargo", "test"], &["sh"]])
    );
    assert_eq!(
        parts("a || b & c |& d").unwrap(),
        words(&[&["a"], &["b"], &["c"], &["d"]])
    );
    assert_eq!(
        parts("cargo test\nrm -rf /\n").unwrap(),
        words(&[&["cargo", "test"], &["rm", "-rf", "/"]])
    );
    // `sh` keeps a carriage return in the word: so does the reader.
    assert_eq!(
        parts("cargo test\r\nls").unwrap(),
        words(&[&["cargo", "test\r"], &["ls"]])
    );
    assert_eq!(
        parts("cargo test;rm x&&y").unwrap(),
        words(&[&["cargo", "test"], &["rm", "x"], &["y"]])
    );
}

#[test]
fn quotes_hide_operators_and_are_removed() {
    assert_eq!(
        parts("cargo test ';'").unwrap(),
        words(&[&["cargo", "test", ";"]])
    );
    assert_eq!(
        parts(r#"echo "a && b" 'c | d' e\;f"#).unwrap(),
        words(&[&["echo", "a && b", "c | d", "e;f"]])
    );
    assert_eq!(
        parts(r#"git commit -m "say \"hi\" \$x""#).unwrap(),
        words(&[&["git", "commit", "-m", r#"say "hi" $x"#]])
    );
    // Quotes join with what touches them into one word.
    assert_eq!(
        parts(r#"car"go" 't'est"#).unwrap(),
        words(&[&["cargo", "test"]])
    );
    assert_eq!(parts("echo ''").unwrap(), words(&[&["echo", ""]]));
    // A line continued by a backslash is one command.
    assert_eq!(
        parts("cargo \\\n test").unwrap(),
        words(&[&["cargo", "test"]])
    );
}

#[test]
fn redirections_are_dropped_from_the_words() {
    assert_eq!(
        parts("cargo test > out.txt 2>&1").unwrap(),
        words(&[&["cargo", "test"]])
    );
    assert_eq!(
        parts("cargo test >>log <in 2>/dev/null &>all").unwrap(),
        words(&[&["cargo", "test"]])
    );
    // Digits apart from the `>` are an argument.
    assert_eq!(parts("echo 2 >x").unwrap(), words(&[&["echo", "2"]]));
    assert_eq!(
        parts("cargo test > 'a b'; ls").unwrap(),
        words(&[&["cargo", "test"], &["ls"]])
    );
    assert_eq!(parts("cargo test >"), Err(Unreadable::Redirection));
    assert_eq!(parts("cargo test > ;ls"), Err(Unreadable::Redirection));
}

#[test]
fn comments_end_at_the_line_and_hide_nothing_after_it() {
    assert_eq!(
        parts("cargo test # it's ; fine\nrm -rf ~").unwrap(),
        words(&[&["cargo", "test"], &["rm", "-rf", "~"]])
    );
    // A `#` inside a word is not a comment.
    assert_eq!(parts("echo a#b").unwrap(), words(&[&["echo", "a#b"]]));
}

#[test]
fn substitutions_and_compound_commands_cannot_be_read() {
    let cases: &[(&str, Unreadable)] = &[
        ("cargo test $(curl x)", Unreadable::Substitution),
        ("cargo test \"$(curl x)\"", Unreadable::Substitution),
        ("cargo test `curl x`", Unreadable::Substitution),
        ("cargo test \"`curl x`\"", Unreadable::Substitution),
        ("echo $((1+2))", Unreadable::Substitution),
        ("diff <(ls) b", Unreadable::ProcessSubstitution),
        ("tee >(sh)", Unreadable::ProcessSubstitution),
        ("cat <<EOF\nrm -rf ~\nEOF", Unreadable::HereDocument),
        ("cat <<<x", Unreadable::HereDocument),
        ("echo 'oops", Unreadable::UnbalancedQuote),
        ("echo \"oops", Unreadable::UnbalancedQuote),
        ("(rm -rf ~)", Unreadable::Subshell),
        ("cargo test; (curl x)", Unreadable::Subshell),
        ("f() { rm -rf ~; }; f", Unreadable::Subshell),
        ("{ rm -rf ~; }", Unreadable::Compound("{".into())),
        ("if true; then rm x; fi", Unreadable::Compound("if".into())),
        (
            "for f in *; do rm $f; done",
            Unreadable::Compound("for".into()),
        ),
        ("! cargo test", Unreadable::Compound("!".into())),
        (
            "PATH=/tmp/evil cargo test",
            Unreadable::Assignment("PATH=/tmp/evil".into()),
        ),
        (
            "cargo test; LD_PRELOAD=x ls",
            Unreadable::Assignment("LD_PRELOAD=x".into()),
        ),
        ("$CMD test", Unreadable::ExpandedName("$CMD".into())),
        (
            "cargo test && ${X} y",
            Unreadable::ExpandedName("${X}".into()),
        ),
        ("\"$X\" y", Unreadable::ExpandedName("$X".into())),
        ("ca* test", Unreadable::ExpandedName("ca*".into())),
        ("echo ${x:-$(rm)}", Unreadable::Expansion),
        ("echo $'\\x41'", Unreadable::DollarQuote),
        ("", Unreadable::Empty),
        ("  ;  ", Unreadable::Empty),
        ("> file", Unreadable::Empty),
    ];
    for (line, why) in cases {
        assert_eq!(parts(line).as_ref(), Err(why), "{line:?}");
    }
}

#[test]
fn variables_and_globs_in_arguments_are_read_but_marked() {
    let parts = split("cargo test $FILTER *.rs ~/x ok").unwrap();
    let expands: Vec<bool> = parts[0].words.iter().map(|w| w.expands).collect();
    assert_eq!(expands, [false, false, true, true, true, false]);
    // Quoted, they are plain words.
    let quoted = split("cargo test '$FILTER' \"*.rs\"").unwrap();
    assert!(quoted[0].words.iter().all(|w| !w.expands));
    // `[ ... ]` is the test command.
    assert_eq!(
        split("[ -f x ] && ls").unwrap()[0].texts(),
        ["[", "-f", "x", "]"]
    );
}

#[test]
fn quote_reads_back_as_the_same_word() {
    for text in ["cargo", "a b", "it's", "x;y", "", "$HOME", "--flag=1"] {
        let line = format!("echo {}", quote(text));
        assert_eq!(split(&line).unwrap()[0].texts(), ["echo", text], "{line}");
        assert!(!split(&line).unwrap()[0].words[1].expands, "{line}");
    }
}
