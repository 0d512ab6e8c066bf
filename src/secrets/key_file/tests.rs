use std::io::Read;
use std::os::unix::fs::{MetadataExt, PermissionsExt};

use super::*;

fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn the_key_line_is_replaced_or_added_and_other_lines_stay() {
    assert_eq!(with_key("", "sk-1"), "DEEPSEEK_API_KEY=sk-1\n");
    assert_eq!(
        with_key("A=1\n# note\nDEEPSEEK_API_KEY=old\nB=2", "sk-1"),
        "A=1\n# note\nDEEPSEEK_API_KEY=sk-1\nB=2\n"
    );
    assert_eq!(
        with_key("SERPAPI_KEY=x\n", "sk-1"),
        "SERPAPI_KEY=x\nDEEPSEEK_API_KEY=sk-1\n"
    );
    // Later duplicates would be ignored when read; they go.
    assert_eq!(
        with_key(
            "export DEEPSEEK_API_KEY = old\nX=1\nDEEPSEEK_API_KEY=older\n",
            "sk-1"
        ),
        "DEEPSEEK_API_KEY=sk-1\nX=1\n"
    );
    // Only that exact name: a longer name or a comment is another line.
    assert_eq!(
        with_key("DEEPSEEK_API_KEY_OLD=1\n# DEEPSEEK_API_KEY=2\n", "k"),
        "DEEPSEEK_API_KEY_OLD=1\n# DEEPSEEK_API_KEY=2\nDEEPSEEK_API_KEY=k\n"
    );
}

#[test]
fn keys_with_characters_a_env_file_would_change_are_refused() {
    assert!(is_valid_key("sk-0123456789abcdef"));
    assert!(is_valid_key("sk-proj_AB.c~d+e/f=g:h,i@j%k"));
    for bad in [
        "", "sk 1", "sk-'1", "sk-\"1", "sk-$HOME", "sk-#1", "sk-\\1", "ключ",
    ] {
        assert!(!is_valid_key(bad), "{bad:?}");
    }
    assert!(!is_valid_key(&"a".repeat(MAX_KEY_CHARS + 1)));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".env");
    assert!(matches!(
        save_key(&path, &Secret::new("sk 1")),
        Err(KeyFileError::BadKey)
    ));
    assert!(!path.exists());
}

#[test]
fn a_save_creates_the_folder_0700_and_the_file_0600() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("config/miniclaw");
    let path = folder.join(".env");
    save_key(&path, &Secret::new("sk-new-0123456789")).unwrap();
    assert_eq!(mode(&folder), 0o700);
    assert_eq!(mode(&path), 0o600);
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        "DEEPSEEK_API_KEY=sk-new-0123456789\n"
    );
    assert_eq!(
        read_key(&path).unwrap().unwrap().expose(),
        "sk-new-0123456789"
    );
}

#[test]
fn a_save_keeps_the_other_lines_and_tightens_the_mode() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".env");
    fs::write(
        &path,
        "SERPAPI_KEY=serp\nDEEPSEEK_API_KEY=old\nMINICLAW_THEME=light\n",
    )
    .unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
    save_key(&path, &Secret::new("sk-2")).unwrap();
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        "SERPAPI_KEY=serp\nDEEPSEEK_API_KEY=sk-2\nMINICLAW_THEME=light\n"
    );
    assert_eq!(mode(&path), 0o600);
}

#[test]
fn a_save_replaces_the_file_whole_and_leaves_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".env");
    fs::write(&path, "DEEPSEEK_API_KEY=old\n").unwrap();
    let before = fs::metadata(&path).unwrap().ino();
    let before_print = fingerprint(&path).unwrap();
    // A reader that opened the file before the save sees the old content whole: the save wrote
    // a new file and renamed it over, never the old one in place.
    let mut reader = File::open(&path).unwrap();
    save_key(&path, &Secret::new("sk-3")).unwrap();
    let mut seen = String::new();
    reader.read_to_string(&mut seen).unwrap();
    assert_eq!(seen, "DEEPSEEK_API_KEY=old\n");
    assert_ne!(fs::metadata(&path).unwrap().ino(), before);
    assert_ne!(fingerprint(&path).unwrap(), before_print);
    let names: Vec<String> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec![".env".to_string()]);
}

#[test]
fn a_linked_key_file_is_written_through_to_its_target() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("dotfiles/miniclaw.env");
    fs::create_dir_all(real.parent().unwrap()).unwrap();
    fs::write(&real, "A=1\n").unwrap();
    let link = dir.path().join(".env");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    save_key(&link, &Secret::new("sk-4")).unwrap();
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        fs::read_to_string(&real).unwrap(),
        "A=1\nDEEPSEEK_API_KEY=sk-4\n"
    );
    assert_eq!(mode(&real), 0o600);
}

#[test]
fn reading_takes_the_first_key_and_skips_lines_that_do_not_parse() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".env");
    assert!(read_key(&path).unwrap().is_none(), "no file, no key");
    fs::write(
        &path,
        "this is not a line\nDEEPSEEK_API_KEY=\"sk-a\"\nDEEPSEEK_API_KEY=sk-b\n",
    )
    .unwrap();
    assert_eq!(read_key(&path).unwrap().unwrap().expose(), "sk-a");
    fs::write(&path, "DEEPSEEK_API_KEY=   \nOTHER=1\n").unwrap();
    assert!(
        read_key(&path).unwrap().is_none(),
        "an empty value is no key"
    );
    // Reading never sets the process environment.
    assert!(std::env::var_os("OTHER").is_none());
}

#[test]
fn errors_never_hold_the_key() {
    let dir = tempfile::tempdir().unwrap();
    // A folder where the file should be: the save fails, naming the path only.
    let path = dir.path().join(".env");
    fs::create_dir(&path).unwrap();
    let err = save_key(&path, &Secret::new("sk-secret-5")).unwrap_err();
    let text = format!("{err} {err:?}");
    assert!(!text.contains("sk-secret-5"), "{text}");
    assert!(text.contains(".env"), "{text}");
    assert_eq!(
        format!("{:?}", Secret::new("sk-secret-5")),
        "Secret(<redacted>)"
    );
}
