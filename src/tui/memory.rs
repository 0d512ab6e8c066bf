//! Memory the program no longer uses, given back after a turn and once a session read in the
//! background is shown: the allocator's free pages, and the pages of its own code mapped since.
//!
//! The code is mapped from the executable 64 KB around each page the program runs (the
//! kernel's fault-around), so a turn that went through start-up, the session's reading,
//! the syntaxes' loading and a streamed answer leaves ~9 MB of code resident, most of it
//! never run again. Unmapping it costs nothing to keep: the pages stay in the page cache, and
//! the code the next frames run is mapped again from there (a few hundred minor faults).

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
/// very function. Only that one is touched: it is read and executed, never written (the kernel
/// refuses writes to a running executable's file), so the pages mapped again are the same
/// code. Written mappings (relocated data) would lose their contents and are left alone.
#[cfg(target_os = "linux")]
fn release_code_pages() {
    let Some((start, end)) = code_mapping() else {
        return;
    };
    // SAFETY: the range is a whole mapping of the executable's code, read-only and never
    // written; MADV_DONTNEED on a private file mapping only drops its page-table entries, and
    // the next access maps the file's (unchanged) pages again.
    unsafe {
        libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED);
    }
}

/// The start and end of the executable mapping (`r-xp`) that holds this function's code.
#[cfg(target_os = "linux")]
fn code_mapping() -> Option<(usize, usize)> {
    let here = code_mapping as fn() -> Option<(usize, usize)> as usize;
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines().find_map(|line| {
        let mut fields = line.split_whitespace();
        let (range, perms) = (fields.next()?, fields.next()?);
        let (start, end) = range.split_once('-')?;
        let start = usize::from_str_radix(start, 16).ok()?;
        let end = usize::from_str_radix(end, 16).ok()?;
        (perms == "r-xp" && (start..end).contains(&here)).then_some((start, end))
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
        let (start, end) = code_mapping().expect("this test's own code is mapped");
        assert!(end > start);
        let before = resident_kb(start);
        release_code_pages();
        let after = resident_kb(start);
        assert!(
            after < before,
            "{after} KB resident after, {before} KB before"
        );
        // The code runs on, mapped again as it is reached (the same function, found again).
        assert_eq!(code_mapping(), Some((start, end)));
        let text: String = ["still", " ", "runs"].concat();
        assert_eq!(text, "still runs");
    }
}
