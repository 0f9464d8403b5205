//! The seccomp filter of every jail: the container-escape and kernel-attack surface that no
//! tool needs (Docker's default deny list, judged for tools), compiled once per process with
//! `seccompiler`.
//!
//! The program has three parts, run in order:
//!
//! 1. The architecture check (another ABI, e.g. 32-bit `int 0x80`, kills the process) and,
//!    on x86_64, the x32 ABI's numbers (bit 30 set) refused with ENOSYS: they would
//!    otherwise slip past every number compared below.
//! 2. The calls that return ENOSYS, so that libc and libuv fall back to an older call
//!    (`clone3` to `clone`, whose flags the filter can read; `io_uring_*` to the thread
//!    pool).
//! 3. The calls that return EPERM.
//!
//! Parts 2 and 3 are each a `seccompiler` filter; part 2's "allow" ends jump to part 3
//! instead of returning, which makes them one program (bwrap takes one, and the lighter
//! jail installs one).
//!
//! The bwrap jail gets the common filter through `--seccomp 6`; the lighter jail gets the
//! common filter plus its own rules (no signals to the agent, no sockets of the network
//! when it is off), installed by the forked child itself (`process::ChildSetup`).

use crate::lock::Locked;
use seccompiler::{
    SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
    TargetArch, sock_filter,
};
use std::collections::BTreeMap;
use std::sync::OnceLock;

use crate::exec::error::FilterError;

/// A compiled filter: BPF instructions, as the kernel and bwrap take them.
#[derive(Debug)]
pub(crate) struct Program {
    insns: Vec<sock_filter>,
}

impl Program {
    /// The instructions, for `seccomp(SECCOMP_SET_MODE_FILTER)` in a forked child.
    pub(crate) fn insns(&self) -> &[sock_filter] {
        &self.insns
    }

    /// The instructions as bytes, for bwrap's `--seccomp FD`.
    pub(crate) fn bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.insns.len() * 8);
        for i in &self.insns {
            out.extend_from_slice(&i.code.to_ne_bytes());
            out.push(i.jt);
            out.push(i.jf);
            out.extend_from_slice(&i.k.to_ne_bytes());
        }
        out
    }
}

/// What the lighter jail adds to the common filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct LightRules {
    /// The agent's pid and process group: no signal to either (nor to `-1`, every process
    /// this user may signal).
    pub(crate) agent: i32,
    pub(crate) agent_group: i32,
    /// No socket but netlink (see [`OFFLINE_FAMILIES`]): no `AF_INET`, `AF_INET6`,
    /// `AF_PACKET`, `AF_VSOCK`, ...
    pub(crate) no_network: bool,
    /// The Landlock ABI in force: below 3 Landlock does not handle `truncate`, below 6 it
    /// does not scope signals, and the filter stands in where it can.
    pub(crate) landlock_abi: i32,
    /// The agent runs as root: its tools' uid 0 owns the host's system files, and without
    /// capabilities still changes their metadata, which Landlock does not cover.
    pub(crate) root: bool,
}

/// The filter of every bwrap jail, compiled once.
pub(crate) fn common() -> Result<&'static Program, FilterError> {
    static COMMON: OnceLock<Result<Program, FilterError>> = OnceLock::new();
    COMMON
        .get_or_init(|| compile(None, false))
        .as_ref()
        .map_err(Clone::clone)
}

/// The filter of a bwrap jail without network, compiled once: [`common`], and no socket
/// of a family the network namespace does not contain (see [`OFFLINE_FAMILIES`]).
pub(crate) fn common_offline() -> Result<&'static Program, FilterError> {
    static OFFLINE: OnceLock<Result<Program, FilterError>> = OnceLock::new();
    OFFLINE
        .get_or_init(|| compile(None, true))
        .as_ref()
        .map_err(Clone::clone)
}

/// The socket families a tool without network may still open. An empty network namespace
/// holds IP and netlink sockets, but not every family: `AF_VSOCK` reaches the hypervisor's
/// host from a VM whatever the namespace, `AF_BLUETOOTH` the radio. So with the network
/// off the filter allows a list rather than refusing one: netlink (glibc's `getaddrinfo`
/// asks it for the interfaces) and, in bwrap's namespaces, Unix sockets and IP on the
/// jail's own loopback. The lighter jail, without namespaces, allows the first only.
const OFFLINE_FAMILIES: [u64; 4] = [
    libc::AF_NETLINK as u64,
    libc::AF_UNIX as u64,
    libc::AF_INET as u64,
    libc::AF_INET6 as u64,
];

/// The lighter jail's filter for `rules`, compiled once per value (the agent's pid does
/// not change, so at most two: network on and off).
pub(crate) fn light(rules: LightRules) -> Result<&'static Program, FilterError> {
    type Cache = std::sync::Mutex<Vec<(LightRules, &'static Program)>>;
    static LIGHT: OnceLock<Cache> = OnceLock::new();
    let cache = LIGHT.get_or_init(Default::default);
    let mut cache = cache.locked();
    if let Some((_, p)) = cache.iter().find(|(r, _)| *r == rules) {
        return Ok(p);
    }
    // Leaked on purpose: a forked child reads it by address, and there are at most a few.
    let p: &'static Program = Box::leak(Box::new(compile(Some(rules), rules.no_network)?));
    cache.push((rules, p));
    Ok(p)
}

fn arch() -> Result<TargetArch, FilterError> {
    if cfg!(target_arch = "x86_64") {
        Ok(TargetArch::x86_64)
    } else if cfg!(target_arch = "aarch64") {
        Ok(TargetArch::aarch64)
    } else if cfg!(target_arch = "riscv64") {
        Ok(TargetArch::riscv64)
    } else {
        Err(FilterError(format!(
            "no seccomp filter is defined for {}",
            std::env::consts::ARCH
        )))
    }
}

/// Calls that return EPERM whatever their arguments.
const DENIED: &[libc::c_long] = &[
    // Reading or changing other processes.
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_kcmp,
    libc::SYS_pidfd_getfd,
    // Kernel attack surface no tool needs.
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_keyctl,
    libc::SYS_fanotify_init,
    // The kernel itself.
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_reboot,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_acct,
    libc::SYS_syslog,
    libc::SYS_quotactl,
    libc::SYS_lookup_dcookie,
    libc::SYS_vhangup,
    // Mounts: the jail's view of the filesystem is fixed.
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_mount_setattr,
    libc::SYS_chroot,
    // Namespaces: none joined (new ones: see `clone` and `unshare`).
    libc::SYS_setns,
    // File handles reach files by inode, past every path rule.
    libc::SYS_open_by_handle_at,
    libc::SYS_name_to_handle_at,
    // The host's clock.
    libc::SYS_settimeofday,
    libc::SYS_clock_settime,
    libc::SYS_clock_adjtime,
];

/// x86_64's own: port I/O and system calls removed from the kernel.
#[cfg(target_arch = "x86_64")]
const DENIED_ARCH: &[libc::c_long] = &[
    libc::SYS_iopl,
    libc::SYS_ioperm,
    libc::SYS_nfsservctl,
    libc::SYS_uselib,
    libc::SYS_ustat,
    libc::SYS_sysfs,
    libc::SYS__sysctl,
];
#[cfg(not(target_arch = "x86_64"))]
const DENIED_ARCH: &[libc::c_long] = &[];

/// The flags that make a namespace, in `clone` and `unshare`.
const NAMESPACE_FLAGS: [u64; 7] = [
    libc::CLONE_NEWUSER as u64,
    libc::CLONE_NEWNS as u64,
    libc::CLONE_NEWPID as u64,
    libc::CLONE_NEWNET as u64,
    libc::CLONE_NEWIPC as u64,
    libc::CLONE_NEWUTS as u64,
    libc::CLONE_NEWCGROUP as u64,
];

/// The bits of `socket`'s and `socketpair`'s type argument that hold the type (the rest are
/// `SOCK_NONBLOCK` and `SOCK_CLOEXEC`).
const SOCK_TYPE_MASK: u64 = 0xf;

/// The calls that set a file's mode, with the index of their mode argument. `fchmodat2`
/// (Linux 6.6) has the same number on every architecture, and no name in `libc` on all.
#[cfg(target_arch = "x86_64")]
const CHMODS: &[(libc::c_long, u8)] = &[
    (libc::SYS_chmod, 1),
    (libc::SYS_fchmod, 1),
    (libc::SYS_fchmodat, 2),
    (452, 2),
];
#[cfg(not(target_arch = "x86_64"))]
const CHMODS: &[(libc::c_long, u8)] = &[(libc::SYS_fchmod, 1), (libc::SYS_fchmodat, 2), (452, 2)];

/// The calls that change a file's mode, owner or extended attributes, refused outright for
/// a root agent's lighter jail (times stay: `touch` sets them, and they grant nothing). `fchmodat2` (452), `setxattrat` (463) and `removexattrat` (466) have the same
/// number on every architecture.
const METADATA: &[libc::c_long] = &[
    libc::SYS_fchmod,
    libc::SYS_fchmodat,
    452,
    libc::SYS_fchown,
    libc::SYS_fchownat,
    libc::SYS_setxattr,
    libc::SYS_lsetxattr,
    libc::SYS_fsetxattr,
    libc::SYS_removexattr,
    libc::SYS_lremovexattr,
    libc::SYS_fremovexattr,
    463,
    466,
];
/// The older calls of x86_64 (other architectures have only the `*at` forms).
#[cfg(target_arch = "x86_64")]
const METADATA_ARCH: &[libc::c_long] = &[libc::SYS_chmod, libc::SYS_chown, libc::SYS_lchown];
#[cfg(not(target_arch = "x86_64"))]
const METADATA_ARCH: &[libc::c_long] = &[];

/// `fcntl` commands the `libc` crate does not name (Linux's `asm-generic/fcntl.h`, the
/// same on x86_64, aarch64 and riscv64).
const F_SETSIG: i32 = 10;
const F_SETOWN_EX: i32 = 15;

/// `personality` values a program may set (Docker's list): the default, `PER_LINUX32`,
/// `UNAME26`, both, and the query `0xffffffff`.
const PERSONALITIES: [u64; 5] = [0, 0x8, 0x20000, 0x20008, 0xffff_ffff];

fn cond(
    arg: u8,
    len: SeccompCmpArgLen,
    op: SeccompCmpOp,
    value: u64,
) -> Result<SeccompCondition, FilterError> {
    SeccompCondition::new(arg, len, op, value).map_err(|e| FilterError(e.to_string()))
}

fn rule(conditions: Vec<SeccompCondition>) -> Result<SeccompRule, FilterError> {
    SeccompRule::new(conditions).map_err(|e| FilterError(e.to_string()))
}

/// One rule per value: argument `arg` (an `int`) equal to it.
fn any_of(arg: u8, values: &[u64]) -> Result<Vec<SeccompRule>, FilterError> {
    values
        .iter()
        .map(|v| {
            rule(vec![cond(
                arg,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::Eq,
                *v,
            )?])
        })
        .collect()
}

/// `offline`: no network (see [`OFFLINE_FAMILIES`]).
fn compile(light: Option<LightRules>, offline: bool) -> Result<Program, FilterError> {
    use SeccompCmpArgLen::{Dword, Qword};
    use SeccompCmpOp::{MaskedEq, Ne};
    let arch = arch()?;
    let err = |e: seccompiler::BackendError| FilterError(e.to_string());

    let mut nosys: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for nr in [
        libc::SYS_clone3,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
    ] {
        nosys.insert(nr, Vec::new());
    }

    let mut eperm: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for nr in DENIED.iter().chain(DENIED_ARCH) {
        eperm.insert(*nr, Vec::new());
    }
    // A new namespace of any kind, by `clone` (flags in argument 0) or `unshare`.
    let ns = |arg: u8| -> Result<Vec<SeccompRule>, FilterError> {
        NAMESPACE_FLAGS
            .iter()
            .map(|f| rule(vec![cond(arg, Qword, MaskedEq(*f), *f)?]))
            .collect()
    };
    eperm.insert(libc::SYS_clone, ns(0)?);
    eperm.insert(libc::SYS_unshare, ns(0)?);
    eperm.insert(
        libc::SYS_personality,
        vec![rule(
            PERSONALITIES
                .iter()
                .map(|v| cond(0, Dword, Ne, *v))
                .collect::<Result<_, _>>()?,
        )?],
    );

    if let Some(l) = light {
        light_rules(l, offline, &mut eperm, &mut nosys)?;
    }
    if offline {
        // One rule whose conditions must all hold: a family that is none of those allowed.
        // The lighter jail allows netlink alone.
        let allowed: &[u64] = if light.is_some() {
            &OFFLINE_FAMILIES[..1]
        } else {
            &OFFLINE_FAMILIES
        };
        eperm.insert(
            libc::SYS_socket,
            vec![rule(
                allowed
                    .iter()
                    .map(|f| cond(0, Dword, Ne, *f))
                    .collect::<Result<_, _>>()?,
            )?],
        );
    }

    let nosys: Vec<sock_filter> = SeccompFilter::new(
        nosys,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        arch,
    )
    .and_then(TryInto::try_into)
    .map_err(err)?;
    let eperm: Vec<sock_filter> = SeccompFilter::new(
        eperm,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .and_then(TryInto::try_into)
    .map_err(err)?;
    Ok(Program {
        insns: chain(&nosys, &eperm)?,
    })
}

/// What the lighter jail adds to the common filter, having no namespaces: no set-id or
/// group/other-write modes (and, for a root agent, no metadata change at all), no signal
/// to the agent, no Unix socket by path, and where its Landlock ABI falls short,
/// `truncate` and `F_SETOWN`.
fn light_rules(
    l: LightRules,
    offline: bool,
    eperm: &mut BTreeMap<i64, Vec<SeccompRule>>,
    nosys: &mut BTreeMap<i64, Vec<SeccompRule>>,
) -> Result<(), FilterError> {
    use SeccompCmpArgLen::Dword;
    use SeccompCmpOp::MaskedEq;
    // Landlock does not cover a file's metadata: without a mount namespace a tool may
    // change the mode of any file its uid owns. Never the set-id bits (`chmod u+s` on a
    // copy of a shell would hand every local user the agent's uid; no-new-privileges
    // only holds inside the jail), nor write for the group or others (`chmod 666
    // ~/.ssh/authorized_keys` would let every local user add a key); `(call, mode
    // argument)`. Other modes pass: `chmod +x` in the state folder is common.
    for &(nr, arg) in CHMODS {
        let bits = [libc::S_ISUID, libc::S_ISGID, libc::S_IWGRP, libc::S_IWOTH]
            .iter()
            .map(|bit| rule(vec![cond(arg, Dword, MaskedEq(*bit as u64), *bit as u64)?]))
            .collect::<Result<Vec<_>, _>>()?;
        eperm.insert(nr, bits);
    }
    if l.root {
        // A root agent's tool is uid 0 without capabilities, and uid 0 owns the host's
        // system files: `chmod 644 /etc/shadow` needs no capability. Any change of a
        // mode, an owner (among its own groups) or an extended attribute is refused, by
        // path or descriptor.
        for nr in METADATA.iter().chain(METADATA_ARCH) {
            eperm.insert(*nr, Vec::new());
        }
    }
    // A signal to the agent, its process group or every process (`-1`). `tkill` (any
    // thread's id) is refused outright: glibc's `raise` and `pthread_kill` use
    // `tgkill`. A pidfd can name the agent however it was opened (`/proc/<pid>` too):
    // `pidfd_send_signal` returns ENOSYS, and programs fall back to `kill`.
    let pid = |p: i32| p as u32 as u64;
    let targets = [pid(l.agent), pid(-1), pid(-l.agent_group)];
    eperm.insert(libc::SYS_kill, any_of(0, &targets)?);
    eperm.insert(libc::SYS_rt_sigqueueinfo, any_of(0, &targets)?);
    eperm.insert(libc::SYS_tgkill, any_of(0, &[pid(l.agent)])?);
    eperm.insert(libc::SYS_rt_tgsigqueueinfo, any_of(0, &[pid(l.agent)])?);
    eperm.insert(libc::SYS_tkill, Vec::new());
    nosys.insert(libc::SYS_pidfd_send_signal, Vec::new());
    // Without a mount namespace every Unix socket of the host (the Docker daemon's,
    // D-Bus, an ssh agent) could be reached by path: no `socket(AF_UNIX)`
    // (`socketpair`, which pipes to a program's own children, stays).
    if !offline {
        eperm.insert(libc::SYS_socket, any_of(0, &[libc::AF_UNIX as u64])?);
    }
    if l.landlock_abi < 3 {
        // Landlock before ABI 3 lets `truncate(path)` through on any file this uid may
        // write (the user's whole home; `/etc/passwd` for a root agent), opened or not.
        // `ftruncate` needs a descriptor opened for writing, which Landlock checked.
        eperm.insert(libc::SYS_truncate, Vec::new());
    }
    if l.landlock_abi < 6 {
        // Without Landlock's signal scoping, `F_SETOWN` names any process (the agent)
        // to receive SIGIO, or with `F_SETSIG` any signal, when the descriptor is ready.
        eperm.insert(
            libc::SYS_fcntl,
            any_of(
                1,
                &[libc::F_SETOWN as u64, F_SETOWN_EX as u64, F_SETSIG as u64],
            )?,
        );
    }
    // A datagram pair is no pipe: `sendto` (or `connect`) with a path reaches any Unix
    // datagram socket of the host (syslog's `/dev/log`, journald's, `NOTIFY_SOCKET`)
    // the way `socket(AF_UNIX)` would. Stream and seqpacket pairs cannot be pointed
    // elsewhere (`EISCONN`, and an address given to `sendto` is refused or ignored).
    eperm.insert(
        libc::SYS_socketpair,
        vec![rule(vec![cond(
            1,
            Dword,
            MaskedEq(SOCK_TYPE_MASK),
            libc::SOCK_DGRAM as u64,
        )?])?],
    );
    Ok(())
}

const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JMP_JA: u16 = 0x05;
const BPF_JMP_JEQ_K: u16 = 0x05 | 0x10;
const BPF_JMP_JGE_K: u16 = 0x05 | 0x30;
const BPF_RET_K: u16 = 0x06;
/// `seccompiler`'s programs start with these three: load the architecture, compare it,
/// kill on a mismatch.
const ARCH_CHECK_LEN: usize = 3;

fn stmt(code: u16, k: u32) -> sock_filter {
    sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

/// One program: `first`'s architecture check, the x32 guard, `first`'s body with every
/// "allow" turned into a jump past its end, then `second`'s body.
fn chain(first: &[sock_filter], second: &[sock_filter]) -> Result<Vec<sock_filter>, FilterError> {
    let is_arch_check = |p: &[sock_filter]| {
        p.len() > ARCH_CHECK_LEN
            && p[0].code == BPF_LD_W_ABS
            && p[0].k == 4
            && p[1].code == BPF_JMP_JEQ_K
            && p[2].code == BPF_RET_K
    };
    if !is_arch_check(first) || !is_arch_check(second) || first[1].k != second[1].k {
        return Err(FilterError(
            "seccompiler's program does not start with the expected architecture check".into(),
        ));
    }
    let mut out: Vec<sock_filter> = first[..ARCH_CHECK_LEN].to_vec();
    if cfg!(target_arch = "x86_64") {
        // The x32 ABI: the same architecture, numbers with bit 30 set.
        const X32_SYSCALL_BIT: u32 = 0x4000_0000;
        out.push(stmt(BPF_LD_W_ABS, 0));
        out.push(sock_filter {
            code: BPF_JMP_JGE_K,
            jt: 0,
            jf: 1,
            k: X32_SYSCALL_BIT,
        });
        out.push(stmt(
            BPF_RET_K,
            libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32,
        ));
    }
    let body = &first[ARCH_CHECK_LEN..];
    for (i, insn) in body.iter().enumerate() {
        if insn.code == BPF_RET_K && insn.k == libc::SECCOMP_RET_ALLOW {
            // To the instruction right after `body`: `second`'s first.
            out.push(stmt(BPF_JMP_JA, (body.len() - i - 1) as u32));
        } else {
            out.push(insn.clone());
        }
    }
    out.extend_from_slice(&second[ARCH_CHECK_LEN..]);
    if out.len() > libc::BPF_MAXINSNS as usize {
        return Err(FilterError(format!(
            "{} instructions, more than the kernel takes",
            out.len()
        )));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `program` on one system call the way the kernel does (the subset of classic
    /// BPF that `seccompiler` and `chain` emit), returning the action.
    fn run(program: &[sock_filter], arch: u32, nr: i64, args: [u64; 6]) -> u32 {
        let mut data = Vec::new();
        data.extend_from_slice(&(nr as i32).to_ne_bytes());
        data.extend_from_slice(&arch.to_ne_bytes());
        data.extend_from_slice(&0u64.to_ne_bytes());
        for a in args {
            data.extend_from_slice(&a.to_ne_bytes());
        }
        let (mut a, mut pc) = (0u32, 0usize);
        loop {
            let i = &program[pc];
            pc += 1;
            match i.code {
                BPF_LD_W_ABS => {
                    let o = i.k as usize;
                    a = u32::from_ne_bytes(data[o..o + 4].try_into().unwrap());
                }
                0x54 => a &= i.k, // BPF_ALU | BPF_AND | BPF_K
                BPF_JMP_JA => pc += i.k as usize,
                BPF_JMP_JEQ_K | BPF_JMP_JGE_K | 0x25 | 0x45 => {
                    let hit = match i.code {
                        BPF_JMP_JEQ_K => a == i.k,
                        BPF_JMP_JGE_K => a >= i.k,
                        0x25 => a > i.k,   // JGT
                        _ => a & i.k != 0, // JSET
                    };
                    pc += if hit { i.jt } else { i.jf } as usize;
                }
                BPF_RET_K => return i.k,
                c => panic!("instruction {c:#x} not modelled"),
            }
        }
    }

    const EPERM: u32 = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
    const ENOSYS: u32 = libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32;
    const ALLOW: u32 = libc::SECCOMP_RET_ALLOW;

    fn native() -> u32 {
        common().unwrap().insns()[1].k
    }

    #[test]
    fn the_common_filter_denies_the_escape_surface_and_allows_the_rest() {
        let p = common().unwrap().insns();
        let call = |nr: i64, a0: u64| run(p, native(), nr, [a0, 0, 0, 0, 0, 0]);
        for nr in [
            libc::SYS_ptrace,
            libc::SYS_bpf,
            libc::SYS_keyctl,
            libc::SYS_mount,
            libc::SYS_setns,
            libc::SYS_perf_event_open,
        ] {
            assert_eq!(call(nr, 0), EPERM, "syscall {nr}");
        }
        for nr in [libc::SYS_clone3, libc::SYS_io_uring_setup] {
            assert_eq!(call(nr, 0), ENOSYS, "syscall {nr}");
        }
        // Namespaces by flag; threads and forks pass.
        let thread = (libc::CLONE_VM | libc::CLONE_THREAD | libc::CLONE_SIGHAND) as u64;
        assert_eq!(call(libc::SYS_clone, thread), ALLOW);
        assert_eq!(call(libc::SYS_clone, libc::SIGCHLD as u64), ALLOW);
        for f in NAMESPACE_FLAGS {
            assert_eq!(call(libc::SYS_clone, f | libc::SIGCHLD as u64), EPERM);
            assert_eq!(call(libc::SYS_unshare, f), EPERM);
        }
        assert_eq!(call(libc::SYS_unshare, libc::CLONE_FILES as u64), ALLOW);
        assert_eq!(call(libc::SYS_personality, 0xffff_ffff), ALLOW);
        assert_eq!(call(libc::SYS_personality, 0x0040000), EPERM); // ADDR_NO_RANDOMIZE
        for nr in [
            libc::SYS_read,
            libc::SYS_openat,
            libc::SYS_execve,
            libc::SYS_kill,
        ] {
            assert_eq!(call(nr, 0), ALLOW, "syscall {nr}");
        }
        // Another architecture's calls kill; x32's numbers are refused.
        assert_eq!(
            run(p, native() ^ 1, libc::SYS_read, [0; 6]),
            libc::SECCOMP_RET_KILL_PROCESS
        );
        if cfg!(target_arch = "x86_64") {
            assert_eq!(call(libc::SYS_keyctl | 0x4000_0000, 0), ENOSYS);
        }
    }

    #[test]
    fn the_light_filter_guards_the_agent_and_the_network() {
        let rules = LightRules {
            agent: 4242,
            agent_group: 4200,
            no_network: true,
            landlock_abi: 6,
            root: false,
        };
        let p = light(rules).unwrap().insns();
        assert!(std::ptr::eq(p, light(rules).unwrap().insns()), "cached");
        let call = |nr: i64, a0: u64| run(p, native(), nr, [a0, 0, 0, 0, 0, 0]);
        assert_eq!(call(libc::SYS_kill, 4242), EPERM);
        assert_eq!(call(libc::SYS_kill, u32::MAX as u64), EPERM, "kill(-1)");
        assert_eq!(call(libc::SYS_kill, (-4200i32) as u32 as u64), EPERM);
        assert_eq!(call(libc::SYS_kill, 4243), ALLOW);
        assert_eq!(call(libc::SYS_tgkill, 4242), EPERM);
        assert_eq!(call(libc::SYS_tgkill, 4243), ALLOW);
        assert_eq!(call(libc::SYS_pidfd_send_signal, 3), ENOSYS);
        assert_eq!(call(libc::SYS_socket, libc::AF_INET as u64), EPERM);
        assert_eq!(call(libc::SYS_socket, libc::AF_INET6 as u64), EPERM);
        assert_eq!(call(libc::SYS_socket, libc::AF_UNIX as u64), EPERM);
        assert_eq!(call(libc::SYS_socket, libc::AF_NETLINK as u64), ALLOW);
        assert_eq!(call(libc::SYS_socket, libc::AF_VSOCK as u64), EPERM);
        assert_eq!(call(libc::SYS_socket, libc::AF_BLUETOOTH as u64), EPERM);
        assert_eq!(call(libc::SYS_socketpair, libc::AF_UNIX as u64), ALLOW);
        let pair = |ty: i32| {
            run(
                p,
                native(),
                libc::SYS_socketpair,
                [libc::AF_UNIX as u64, ty as u64, 0, 0, 0, 0],
            )
        };
        assert_eq!(pair(libc::SOCK_STREAM | libc::SOCK_CLOEXEC), ALLOW);
        assert_eq!(pair(libc::SOCK_SEQPACKET), ALLOW);
        assert_eq!(pair(libc::SOCK_DGRAM), EPERM);
        assert_eq!(
            pair(libc::SOCK_DGRAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC),
            EPERM
        );
        // No set-id bit and no write for the group or others by any chmod; other modes
        // pass.
        for &(nr, arg) in CHMODS {
            let chmod = |mode: u32| {
                let mut args = [0u64; 6];
                args[arg as usize] = mode as u64;
                run(p, native(), nr, args)
            };
            assert_eq!(chmod(0o4755), EPERM, "syscall {nr}");
            assert_eq!(chmod(0o2755), EPERM, "syscall {nr}");
            assert_eq!(chmod(0o666), EPERM, "syscall {nr}");
            assert_eq!(chmod(0o775), EPERM, "syscall {nr}");
            assert_eq!(chmod(0o755), ALLOW, "syscall {nr}");
            assert_eq!(chmod(0o1755), ALLOW, "syscall {nr}");
        }
        assert_eq!(call(libc::SYS_fchown, 3), ALLOW);
        assert_eq!(call(libc::SYS_fsetxattr, 3), ALLOW);
        // A root agent's tool changes no mode, owner or extended attribute at all.
        let root = light(LightRules {
            root: true,
            ..rules
        })
        .unwrap()
        .insns();
        for nr in METADATA.iter().chain(METADATA_ARCH) {
            assert_eq!(
                run(root, native(), *nr, [3, 0o644, 0o644, 0, 0, 0]),
                EPERM,
                "syscall {nr}"
            );
        }
        assert_eq!(
            run(root, native(), libc::SYS_utimensat, [3, 0, 0, 0, 0, 0]),
            ALLOW
        );
        // The common rules still hold.
        assert_eq!(call(libc::SYS_ptrace, 0), EPERM);
        assert_eq!(call(libc::SYS_clone3, 0), ENOSYS);
        let online = light(LightRules {
            no_network: false,
            ..rules
        })
        .unwrap()
        .insns();
        let call = |nr: i64, a0: u64| run(online, native(), nr, [a0, 0, 0, 0, 0, 0]);
        assert_eq!(call(libc::SYS_socket, libc::AF_INET as u64), ALLOW);
        assert_eq!(call(libc::SYS_socket, libc::AF_VSOCK as u64), ALLOW);
        assert_eq!(call(libc::SYS_socket, libc::AF_UNIX as u64), EPERM);
        // Landlock handles truncate and scopes signals from ABI 3 and 6; before, the filter.
        let fcntl = |p: &[sock_filter], cmd: i32| {
            run(p, native(), libc::SYS_fcntl, [3, cmd as u64, 0, 0, 0, 0])
        };
        assert_eq!(call(libc::SYS_truncate, 0), ALLOW);
        assert_eq!(fcntl(online, libc::F_SETOWN), ALLOW);
        let old = light(LightRules {
            landlock_abi: 2,
            ..rules
        })
        .unwrap()
        .insns();
        let call = |nr: i64, a0: u64| run(old, native(), nr, [a0, 0, 0, 0, 0, 0]);
        assert_eq!(call(libc::SYS_truncate, 0), EPERM);
        assert_eq!(call(libc::SYS_ftruncate, 3), ALLOW);
        for cmd in [libc::F_SETOWN, F_SETOWN_EX, F_SETSIG] {
            assert_eq!(fcntl(old, cmd), EPERM, "fcntl {cmd}");
        }
        for cmd in [
            libc::F_GETFL,
            libc::F_SETFL,
            libc::F_DUPFD_CLOEXEC,
            libc::F_SETFD,
        ] {
            assert_eq!(fcntl(old, cmd), ALLOW, "fcntl {cmd}");
        }
    }

    #[test]
    fn the_offline_bwrap_filter_allows_only_the_families_its_namespaces_hold() {
        let p = common_offline().unwrap().insns();
        let socket = |p: &[sock_filter], family: i32| {
            run(
                p,
                native(),
                libc::SYS_socket,
                [family as u64, libc::SOCK_STREAM as u64, 0, 0, 0, 0],
            )
        };
        // IP stays: the jail's network namespace holds its own loopback only.
        for f in [
            libc::AF_UNIX,
            libc::AF_NETLINK,
            libc::AF_INET,
            libc::AF_INET6,
        ] {
            assert_eq!(socket(p, f), ALLOW, "family {f}");
        }
        for f in [libc::AF_PACKET, libc::AF_VSOCK, libc::AF_BLUETOOTH] {
            assert_eq!(socket(p, f), EPERM, "family {f}");
        }
        // The rest of the common filter is there; with the network on, no family is refused.
        assert_eq!(run(p, native(), libc::SYS_ptrace, [0; 6]), EPERM);
        assert_eq!(socket(common().unwrap().insns(), libc::AF_VSOCK), ALLOW);
    }

    #[test]
    fn bytes_are_the_instructions_in_the_kernels_layout() {
        let p = common().unwrap();
        let b = p.bytes();
        assert_eq!(b.len(), p.insns().len() * 8);
        assert_eq!(u16::from_ne_bytes([b[0], b[1]]), p.insns()[0].code);
        assert_eq!(u32::from_ne_bytes(b[4..8].try_into().unwrap()), 4);
    }
}
