//! The supervisor's namespaces: a user namespace of its own (so it may build the rest without
//! privileges), a network namespace with loopback only (private, or the session's), a mount
//! namespace for the shields and `/tmp`, and a PID namespace whose end ends every process of the
//! command.

use std::fs::File;
use std::os::fd::AsRawFd;

use super::error::JailError;
use super::plan::Network;

/// Enters the namespaces for `network`, then new mount and PID namespaces (the next child is
/// the first process of the PID namespace). Must run while the process has one thread.
pub fn enter(network: Network) -> Result<(), JailError> {
    match network {
        Network::Off => {
            own_user_namespace(libc::CLONE_NEWNET)?;
            loopback_up()?;
        }
        Network::Session { holder } => join(holder)?,
        Network::On => own_user_namespace(0)?,
    }
    // SAFETY: plain system call.
    if unsafe { libc::unshare(libc::CLONE_NEWNS | libc::CLONE_NEWPID) } != 0 {
        return Err(JailError::last("a mount and PID namespace"));
    }
    Ok(())
}

/// A new user namespace (with `extra` namespaces) mapping the person's own user and group to
/// themselves, so files keep their owner.
pub fn own_user_namespace(extra: libc::c_int) -> Result<(), JailError> {
    // SAFETY: plain system calls.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    // SAFETY: plain system call.
    if unsafe { libc::unshare(libc::CLONE_NEWUSER | extra) } != 0 {
        return Err(JailError::Unsupported(format!(
            "the kernel refused a user namespace ({}): unprivileged user namespaces are off \
             (sysctl kernel.unprivileged_userns_clone or user.max_user_namespaces)",
            std::io::Error::last_os_error()
        )));
    }
    write_proc("/proc/self/setgroups", "deny")?;
    write_proc("/proc/self/uid_map", &format!("{uid} {uid} 1"))?;
    write_proc("/proc/self/gid_map", &format!("{gid} {gid} 1"))?;
    Ok(())
}

fn write_proc(path: &str, text: &str) -> Result<(), JailError> {
    std::fs::write(path, text).map_err(|e| JailError::io(format!("writing {path}"), e))
}

/// Joins the user and network namespaces of the session's holder process.
fn join(holder: u32) -> Result<(), JailError> {
    for (kind, flag) in [("user", libc::CLONE_NEWUSER), ("net", libc::CLONE_NEWNET)] {
        let path = format!("/proc/{holder}/ns/{kind}");
        let ns = File::open(&path)
            .map_err(|e| JailError::io("the session's network is gone (its holder ended)", e))?;
        // SAFETY: plain system call on a descriptor we own.
        if unsafe { libc::setns(ns.as_raw_fd(), flag) } != 0 {
            return Err(JailError::last(format!(
                "joining the session's {kind} namespace"
            )));
        }
    }
    Ok(())
}

/// Brings the loopback interface of the current network namespace up.
pub fn loopback_up() -> Result<(), JailError> {
    // SAFETY: a socket we close below; `ifreq` is plain data.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return Err(JailError::last("a socket to set up loopback"));
        }
        let mut req: libc::ifreq = std::mem::zeroed();
        for (slot, byte) in req.ifr_name.iter_mut().zip(b"lo\0") {
            *slot = *byte as libc::c_char;
        }
        let mut ok = libc::ioctl(fd, libc::SIOCGIFFLAGS, &mut req) == 0;
        if ok {
            req.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
            ok = libc::ioctl(fd, libc::SIOCSIFFLAGS, &req) == 0;
        }
        let err = std::io::Error::last_os_error();
        libc::close(fd);
        if !ok {
            return Err(JailError::io("bringing loopback up", err));
        }
    }
    Ok(())
}
