//! The command's Landlock ruleset: it reads and runs the system folders, `/etc`, `/proc`, the
//! toolchains the person allows and the workspace; it writes only beneath the workspace and
//! its private temporary folder (`TMPDIR`) (and the few devices every program writes, like `/dev/null`). The shields (`mounts`)
//! keep the hidden and read-only entries of the workspace out of this. Links, renames and hard
//! links across the edge are the kernel's to refuse (the `REFER` right is granted only beneath
//! the workspace and that folder). Processes in the jail may not signal processes outside it, nor
//! reach abstract sockets made outside it, where the kernel can say so (Linux 6.12).

use std::os::fd::OwnedFd;
use std::path::Path;

use landlock::{
    ABI, Access, AccessFs, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreatedAttr, Scope,
};

use super::error::JailError;
use super::plan::Plan;

/// Folders every program reads and runs from.
const SYSTEM_DIRS: [&str; 9] = [
    "/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc", "/opt", "/proc",
];
/// Devices programs read.
const READ_DEVICES: [&str; 4] = ["/dev/zero", "/dev/random", "/dev/urandom", "/dev/full"];
/// Devices programs write.
const WRITE_DEVICES: [&str; 3] = ["/dev/null", "/dev/zero", "/dev/full"];

/// The oldest Landlock whose file rights the jail needs (Linux 6.2: `REFER` and `TRUNCATE`).
const NEEDED: ABI = ABI::V3;

/// The ruleset's descriptor, ready for `landlock_restrict_self` in the command's process.
pub fn build(plan: &Plan) -> Result<OwnedFd, JailError> {
    let all = AccessFs::from_all(NEEDED);
    let read = AccessFs::from_read(NEEDED);
    let unsupported = |e: landlock::RulesetError| {
        JailError::Unsupported(format!(
            "the kernel cannot enforce the jail's file rules (Landlock ABI 3, Linux 6.2, is \
             needed): {e}"
        ))
    };
    let ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(all)
        .map_err(unsupported)?
        .set_compatibility(CompatLevel::BestEffort)
        .scope(Scope::from_all(ABI::V6))
        .map_err(unsupported)?;
    let mut rules: Vec<(&Path, BitFlags<AccessFs>)> = Vec::new();
    rules.extend(SYSTEM_DIRS.iter().map(|d| (Path::new(*d), read)));
    rules.extend(plan.also_read.iter().map(|p| (p.as_path(), read)));
    let read_file = AccessFs::from_file(NEEDED) & read;
    rules.extend(READ_DEVICES.iter().map(|d| (Path::new(*d), read_file)));
    let write_file = AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate;
    rules.extend(WRITE_DEVICES.iter().map(|d| (Path::new(*d), write_file)));
    // Everything but making device files, which no build needs.
    let write = all & !(AccessFs::MakeChar | AccessFs::MakeBlock);
    rules.push((&plan.workspace, write));
    rules.push((&plan.private.tmp, write));
    let mut ruleset = ruleset.create().map_err(unsupported)?;
    for (path, access) in rules {
        // A path missing on this system is simply not granted.
        let Ok(fd) = PathFd::new(path) else {
            continue;
        };
        ruleset = ruleset
            .add_rule(PathBeneath::new(fd, access))
            .map_err(|e| {
                JailError::Unsupported(format!("a Landlock rule for {}: {e}", path.display()))
            })?;
    }
    let fd: Option<OwnedFd> = ruleset.into();
    fd.ok_or_else(|| JailError::Unsupported("this kernel has no Landlock".into()))
}
