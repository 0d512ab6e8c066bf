//! The command's system-call filter (seccomp), for what Landlock and the namespaces leave open:
//! sockets of families other than IP and netlink (a UNIX socket could reach a daemon outside —
//! the container engine's, the desktop's — and a VSOCK one the host of a virtual machine),
//! `io_uring` (which opens sockets and files around this filter), the kernel's key rings, and
//! every way to change mounts or namespaces. Each is refused with an error, never a kill, so
//! programs that try fall back as they would on a locked-down system. `socketpair` stays
//! allowed: it reaches nothing but itself.

use super::error::JailError;

/// A compiled filter, installed in the command's process between fork and exec.
#[derive(Debug)]
pub struct Filter {
    program: Vec<libc::sock_filter>,
}

#[cfg(target_arch = "x86_64")]
const ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const ARCH: u32 = 0xC000_00B7;

const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JEQ_K: u16 = 0x15;
const BPF_JGE_K: u16 = 0x35;
const BPF_RET_K: u16 = 0x06;
const BPF_JSET_K: u16 = 0x45;
/// `CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID |
/// CLONE_NEWNET`.
const CLONE_NEW_FLAGS: u32 = 0x7E02_0000;
const SECCOMP_RET_ALLOW: u32 = 0x7fff_0000;
const SECCOMP_RET_ERRNO: u32 = 0x0005_0000;
const SECCOMP_RET_KILL_PROCESS: u32 = 0x8000_0000;
/// Offsets in `struct seccomp_data`.
const NR: u32 = 0;
const ARCH_OFFSET: u32 = 4;
const FIRST_ARG: u32 = 16;

/// System calls refused outright, with the error they return.
fn refused_calls() -> Vec<(libc::c_long, i32)> {
    vec![
        (libc::SYS_io_uring_setup, libc::ENOSYS),
        (libc::SYS_io_uring_enter, libc::ENOSYS),
        (libc::SYS_io_uring_register, libc::ENOSYS),
        (libc::SYS_keyctl, libc::EPERM),
        (libc::SYS_add_key, libc::EPERM),
        (libc::SYS_request_key, libc::EPERM),
        (libc::SYS_mount, libc::EPERM),
        (libc::SYS_umount2, libc::EPERM),
        (libc::SYS_pivot_root, libc::EPERM),
        (libc::SYS_open_tree, libc::EPERM),
        (libc::SYS_move_mount, libc::EPERM),
        (libc::SYS_mount_setattr, libc::EPERM),
        (libc::SYS_fsopen, libc::EPERM),
        (libc::SYS_fsmount, libc::EPERM),
        (libc::SYS_fspick, libc::EPERM),
        (libc::SYS_fsconfig, libc::EPERM),
        (libc::SYS_unshare, libc::EPERM),
        (libc::SYS_setns, libc::EPERM),
        (libc::SYS_bpf, libc::EPERM),
        // Its flags sit in memory the filter cannot read, so it cannot be told apart from
        // a clone that makes namespaces: refused as unknown, and the C library falls back to
        // `clone`, whose flags are judged below.
        (libc::SYS_clone3, libc::ENOSYS),
    ]
}

/// Socket families a command may open.
const ALLOWED_FAMILIES: [libc::c_int; 3] = [libc::AF_INET, libc::AF_INET6, libc::AF_NETLINK];

fn statement(code: u16, k: u32) -> libc::sock_filter {
    libc::sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

/// A conditional jump: `jt` instructions on when the test of the value against `k` holds,
/// `jf` when it does not.
fn jump(code: u16, k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    libc::sock_filter { code, jt, jf, k }
}

/// A jump over the next instruction unless the value equals `k`.
fn unless_equal_skip(k: u32) -> libc::sock_filter {
    libc::sock_filter {
        code: BPF_JEQ_K,
        jt: 0,
        jf: 1,
        k,
    }
}

impl Filter {
    /// The filter for this machine's architecture.
    pub fn new() -> Self {
        let mut p = vec![
            statement(BPF_LD_W_ABS, ARCH_OFFSET),
            // Another architecture's calls (32-bit ones on a 64-bit kernel) have other numbers.
            libc::sock_filter {
                code: BPF_JEQ_K,
                jt: 1,
                jf: 0,
                k: ARCH,
            },
            statement(BPF_RET_K, SECCOMP_RET_KILL_PROCESS),
            statement(BPF_LD_W_ABS, NR),
        ];
        #[cfg(target_arch = "x86_64")]
        {
            // x32 calls carry this bit and would bypass the numbers below.
            p.push(libc::sock_filter {
                code: BPF_JGE_K,
                jt: 0,
                jf: 1,
                k: 0x4000_0000,
            });
            p.push(statement(BPF_RET_K, SECCOMP_RET_ERRNO | libc::EPERM as u32));
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = BPF_JGE_K;
        for (call, errno) in refused_calls() {
            p.push(unless_equal_skip(call as u32));
            p.push(statement(BPF_RET_K, SECCOMP_RET_ERRNO | errno as u32));
        }
        // clone(flags, ...): never with a new namespace (a new user namespace would give its
        // first process every capability again, and with it the kernel's netfilter and mount
        // code that `unshare` is refused for).
        p.push(jump(BPF_JEQ_K, libc::SYS_clone as u32, 0, 4));
        p.push(statement(BPF_LD_W_ABS, FIRST_ARG));
        p.push(jump(BPF_JSET_K, CLONE_NEW_FLAGS, 0, 1));
        p.push(statement(BPF_RET_K, SECCOMP_RET_ERRNO | libc::EPERM as u32));
        p.push(statement(BPF_RET_K, SECCOMP_RET_ALLOW));
        // socket(family, ...): only the allowed families.
        p.push(jump(BPF_JEQ_K, libc::SYS_socket as u32, 1, 0));
        p.push(statement(BPF_RET_K, SECCOMP_RET_ALLOW));
        p.push(statement(BPF_LD_W_ABS, FIRST_ARG));
        for family in ALLOWED_FAMILIES {
            p.push(unless_equal_skip(family as u32));
            p.push(statement(BPF_RET_K, SECCOMP_RET_ALLOW));
        }
        p.push(statement(
            BPF_RET_K,
            SECCOMP_RET_ERRNO | libc::EAFNOSUPPORT as u32,
        ));
        Self { program: p }
    }

    /// Installs the filter on the calling thread (and what it runs). Allocation-free: safe
    /// between fork and exec. `no_new_privs` must be set first.
    pub fn install(&self) -> std::io::Result<()> {
        let prog = libc::sock_fprog {
            len: self.program.len() as libc::c_ushort,
            filter: self.program.as_ptr() as *mut libc::sock_filter,
        };
        // SAFETY: `prog` points at the filter, which outlives the call.
        let done = unsafe {
            libc::prctl(
                libc::PR_SET_SECCOMP,
                libc::SECCOMP_MODE_FILTER,
                &prog as *const libc::sock_fprog,
            )
        };
        if done != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }
}

impl Default for Filter {
    fn default() -> Self {
        Self::new()
    }
}

/// Whether the kernel takes seccomp filters (checked once by the supervisor before the command).
pub fn check_supported() -> Result<(), JailError> {
    // SAFETY: plain system call; asks, changes nothing.
    let mode = unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) };
    if mode < 0 {
        return Err(JailError::Unsupported(
            "this kernel has no seccomp: the jail's system-call filter cannot be built".into(),
        ));
    }
    Ok(())
}
