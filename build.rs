//! Links the program with packed relative relocations (`DT_RELR`) where the glibc it is built
//! against can load them (2.36 and newer): the relocation table the loader reads once at
//! start-up shrinks from 1.6 MB to 27 KB, and with it what stays resident (1.3 MB after
//! start-up).
//!
//! A binary linked this way starts only under glibc 2.36 or newer. So it is done only when
//! building for the machine that builds it, with the toolchain's own linker (a linker set for
//! the target, as cross and zig toolchains set one, may aim at an older glibc), on glibc 2.36 or
//! newer, and not when `MINICLAW_PORTABLE_BUILD` is set (for a binary to copy to older systems).

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=MINICLAW_PORTABLE_BUILD");
    let target = std::env::var("TARGET").unwrap_or_default();
    let host = std::env::var("HOST").unwrap_or_default();
    let portable = std::env::var_os("MINICLAW_PORTABLE_BUILD").is_some();
    let own_linker = std::env::var_os("RUSTC_LINKER").is_none();
    if portable || !own_linker || target != host || !target.ends_with("-linux-gnu") {
        return;
    }
    if glibc_version().is_some_and(|v| v >= (2, 36)) {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// The version of the machine's glibc, from `getconf GNU_LIBC_VERSION` ("glibc 2.36").
fn glibc_version() -> Option<(u32, u32)> {
    let out = Command::new("getconf")
        .arg("GNU_LIBC_VERSION")
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let version = text.trim().strip_prefix("glibc ")?;
    let mut parts = version.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}
