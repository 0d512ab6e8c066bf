//! Memory the program no longer uses, given back after a turn and once a session read in the
//! background is shown: the allocator's free pages, and the pages of its own code mapped since.
//!
//! The code is mapped from the executable 64 KB around each page the program runs (the
//! kernel's fault-around), so a turn that went through start-up, the session's reading,
//! the syntaxes' loading and a streamed answer leaves ~9 MB of code resident, most of it
//! never run again. Unmapping it frees no memory of the system's (the pages stay in its page
//! cache) but the program's resident set, and the code the next frames run is mapped again from
//! there (a few hundred minor faults), after the frame that shows the turn's end.

/// Gives back what the last stretch of work left behind (see the module's doc).
pub(crate) fn give_back() {
    give_back_heap();
    #[cfg(target_os = "linux")]
    release_code_pages();
}

/// Gives back the allocator's free pages only: before the first frame, whose code would
/// otherwise be mapped again page by page on the way to it.
pub(crate) fn give_back_heap() {
    #[cfg(target_env = "gnu")]
    // SAFETY: malloc_trim only returns the allocator's free pages; it takes no pointers.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Unmaps the resident pages of the program's code: the executable's mapping that holds this
/// very function, when it is still the file's pages as they are on disk. A mapping with
/// anonymous pages in it (code the loader relocated, a debugger's breakpoints) or one that is
/// not backed by a file (code moved to huge pages by a remapping tool) is left alone: its
/// pages would come back as the file's bytes, or as zeros. Unmapping clean file pages adds no
/// risk of its own: the kernel drops them by itself under memory pressure, and maps them again
/// from the file the same way.
#[cfg(target_os = "linux")]
fn release_code_pages() {
    let Some(Mapping {
        start,
        end,
        file_backed: true,
        anonymous_kb: 0,
    }) = code_mapping()
    else {
        return;
    };
    // SAFETY: the range is a whole read-only mapping of the executable's code, backed by its
    // file and holding no page of its own; MADV_DONTNEED on a private file mapping only drops
    // its page-table entries, and the next access maps the file's pages again.
    unsafe {
        libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED);
    }
}

/// The executable mapping (`r-xp`) that holds this function's code, as `/proc/self/smaps`
/// describes it.
#[cfg(target_os = "linux")]
#[derive(Debug, PartialEq, Eq)]
struct Mapping {
    start: usize,
    end: usize,
    /// Whether a file backs it (a non-zero inode).
    file_backed: bool,
    /// Its pages that are the process's own (written, or not from a file).
    anonymous_kb: u64,
}

#[cfg(target_os = "linux")]
fn code_mapping() -> Option<Mapping> {
    let here = code_mapping as fn() -> Option<Mapping> as usize;
    let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
    let mut lines = smaps.lines();
    // A mapping's header: "start-end perms offset dev inode [path]".
    let (start, end, inode) = lines.by_ref().find_map(|line| {
        let mut fields = line.split_whitespace();
        let (range, perms) = (fields.next()?, fields.next()?);
        let inode = fields.nth(2)?;
        let (start, end) = range.split_once('-')?;
        let start = usize::from_str_radix(start, 16).ok()?;
        let end = usize::from_str_radix(end, 16).ok()?;
        (perms == "r-xp" && (start..end).contains(&here)).then(|| (start, end, inode.to_string()))
    })?;
    // Its fields follow, up to the next header (the next line without a `Name:` shape).
    let anonymous_kb = lines
        .take_while(|line| {
            line.split_whitespace()
                .next()
                .is_some_and(|f| f.ends_with(':'))
        })
        .find_map(|line| line.strip_prefix("Anonymous:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())?;
    Some(Mapping {
        start,
        end,
        file_backed: inode != "0",
        anonymous_kb,
    })
}

#[cfg(test)]
#[cfg(target_os = "linux")]
mod tests {
    use super::*;

    /// The resident KB of the mapping starting at `start`, from /proc/self/smaps.
    fn resident_kb(start: usize) -> usize {
        let smaps = std::fs::read_to_string("/proc/self/smaps").expect("smaps");
        let head = format!("{start:x}-");
        let mut lines = smaps.lines().skip_while(|l| !l.starts_with(&head));
        lines
            .find_map(|l| l.strip_prefix("Rss:"))
            .and_then(|v| v.trim().trim_end_matches(" kB").parse().ok())
            .expect("the mapping's Rss line")
    }

    #[test]
    fn the_code_mapped_is_given_back_and_still_runs() {
        let mapping = code_mapping().expect("this test's own code is mapped");
        assert!(mapping.end > mapping.start);
        assert!(mapping.file_backed, "{mapping:?}");
        assert_eq!(mapping.anonymous_kb, 0, "nothing written in the code");
        let before = resident_kb(mapping.start);
        release_code_pages();
        let after = resident_kb(mapping.start);
        // Other tests run meanwhile and map some of their code again, never all of it.
        assert!(
            after < before,
            "{after} KB resident after, {before} KB before"
        );
        // The code runs on, mapped again as it is reached (the same function, found again).
        assert_eq!(code_mapping(), Some(mapping));
        let text: String = ["still", " ", "runs"].concat();
        assert_eq!(text, "still runs");
    }
}
