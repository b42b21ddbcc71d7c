//! Networks of sandboxed steps. `none` (the default): a network namespace
//! with only a loopback of its own, made by bubblewrap per try. `host`:
//! each tenant's steps share a network namespace of the tenant's own,
//! joined to the machine by a veth pair (`csb<uid>` on the host, `eth0`
//! inside, a /30 out of 100.64.0.0/10 per tenant) and routed out with NAT,
//! so steps reach what the machine reaches, but:
//!
//! - the machine's loopback is not theirs: `127.0.0.1` inside is the
//!   namespace's own, so Postgres, Redis, the API and the metrics port on
//!   the host's loopback are out of reach;
//! - packets from a step to any address of the machine itself (its LAN
//!   address, the veth's host end) are dropped in the `input` hook, so a
//!   service listening on `0.0.0.0` is out of reach too;
//! - nothing is forwarded between tenants' namespaces, into a namespace
//!   from outside, or to link-local addresses (cloud metadata endpoints).
//!
//! The rules live in one nftables table, `inet couler_steps`, replaced as a
//! whole at start. Making the namespaces and rules needs root (iproute2's
//! `ip` and `nft`); IPv4 forwarding is switched on for the machine.
//! Limits: other machines the host can reach (a database on the LAN) are
//! reachable from steps: put such services behind a firewall that refuses
//! the host, or keep `network = "none"`. IPv6 is not routed for steps.

pub use crate::Network;
use std::collections::BTreeSet;
use std::fs::File;
use std::io::Write;
use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Mutex;

const TABLE: &str = "couler_steps";
const PREFIX: &str = "csb";
/// 100.64.0.0/10 (shared address space): one /30 per tenant.
const BASE: u32 = 0x6440_0000;
const TENANTS: u32 = 1 << 20;

/// The machine's side of host networking, set up once per engine.
#[derive(Debug)]
pub(super) struct HostNetwork {
    /// Tenant namespaces known to be complete.
    ready: Mutex<BTreeSet<u32>>,
}

impl HostNetwork {
    /// Installs the nftables rules and enables forwarding; `Err` says why
    /// host networking cannot be offered here.
    pub(super) fn set_up() -> Result<HostNetwork, String> {
        // SAFETY: plain syscall.
        if unsafe { libc::geteuid() } != 0 {
            return Err("network = \"host\" needs the engine to run as root (it makes a veth pair and NAT rules per tenant); use network = \"none\"".into());
        }
        let rules = format!(
            "table inet {TABLE}
delete table inet {TABLE}
table inet {TABLE} {{
  chain input {{
    type filter hook input priority -10; policy accept;
    iifname \"{PREFIX}*\" drop
  }}
  chain forward {{
    type filter hook forward priority -10; policy accept;
    iifname \"{PREFIX}*\" oifname \"{PREFIX}*\" drop
    iifname \"{PREFIX}*\" ip daddr {{ 127.0.0.0/8, 169.254.0.0/16, 100.64.0.0/10 }} drop
    oifname \"{PREFIX}*\" ct state established,related accept
    oifname \"{PREFIX}*\" drop
  }}
  chain postrouting {{
    type nat hook postrouting priority 100; policy accept;
    ip saddr 100.64.0.0/10 oifname != \"{PREFIX}*\" masquerade
  }}
}}
"
        );
        run_with_input("nft", &["-f", "-"], &rules)?;
        std::fs::write("/proc/sys/net/ipv4/ip_forward", "1")
            .map_err(|e| format!("cannot enable IPv4 forwarding: {e}"))?;
        Ok(HostNetwork {
            ready: Mutex::default(),
        })
    }

    /// The network namespace of the tenant whose steps run as `uid` (the
    /// `index`th tenant), made on first use, opened for a try to join.
    pub(super) fn namespace(&self, uid: u32, index: u32) -> Result<PathBuf, String> {
        if index >= TENANTS {
            return Err(format!(
                "tenant uid {uid} is past the {TENANTS} networks of 100.64.0.0/10"
            ));
        }
        let path = PathBuf::from(format!("/run/netns/couler-{uid}"));
        let mut ready = self.ready.lock().unwrap_or_else(|e| e.into_inner());
        if !ready.contains(&uid) {
            let lock = File::create("/run/couler-netns.lock")
                .map_err(|e| format!("cannot lock the step networks: {e}"))?;
            // SAFETY: flock on a descriptor we own; released when it closes.
            unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&lock), libc::LOCK_EX) };
            if !complete(uid) {
                make(uid, index)?;
            }
            ready.insert(uid);
        }
        Ok(path)
    }
}

/// The host and step ends of tenant `index`'s /30.
fn addresses(index: u32) -> (Ipv4Addr, Ipv4Addr) {
    let net = BASE + 4 * index;
    (Ipv4Addr::from(net + 1), Ipv4Addr::from(net + 2))
}

/// Whether the tenant's namespace and its link to the host both exist.
fn complete(uid: u32) -> bool {
    std::path::Path::new(&format!("/run/netns/couler-{uid}")).exists()
        && run("ip", &["link", "show", &format!("{PREFIX}{uid}")]).is_ok()
}

fn make(uid: u32, index: u32) -> Result<(), String> {
    let ns = format!("couler-{uid}");
    let link = format!("{PREFIX}{uid}");
    let (host, step) = addresses(index);
    // A half-made one (a crash in between) is made again.
    let _ = run("ip", &["link", "delete", &link]);
    let _ = run("ip", &["netns", "delete", &ns]);
    let host_cidr = format!("{host}/30");
    let step_cidr = format!("{step}/30");
    let host_ip = host.to_string();
    let steps: [&[&str]; 8] = [
        &["netns", "add", &ns],
        &[
            "link", "add", &link, "type", "veth", "peer", "name", "eth0", "netns", &ns,
        ],
        &["addr", "add", &host_cidr, "dev", &link],
        &["link", "set", &link, "up"],
        &["-n", &ns, "addr", "add", &step_cidr, "dev", "eth0"],
        &["-n", &ns, "link", "set", "eth0", "up"],
        &["-n", &ns, "link", "set", "lo", "up"],
        &["-n", &ns, "route", "add", "default", "via", &host_ip],
    ];
    for args in steps {
        run("ip", args).map_err(|e| format!("cannot make the network of uid {uid}: {e}"))?;
    }
    Ok(())
}

fn run(program: &str, args: &[&str]) -> Result<(), String> {
    run_with_input(program, args, "")
}

fn run_with_input(program: &str, args: &[&str], input: &str) -> Result<(), String> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {program} (install iproute2 and nftables): {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(input.as_bytes())
            .map_err(|e| format!("{program}: {e}"))?;
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("{program}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{program} {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_tenant_gets_its_own_slash_30() {
        assert_eq!(
            addresses(0),
            (Ipv4Addr::new(100, 64, 0, 1), Ipv4Addr::new(100, 64, 0, 2))
        );
        assert_eq!(
            addresses(70),
            (Ipv4Addr::new(100, 64, 1, 25), Ipv4Addr::new(100, 64, 1, 26))
        );
        let last = addresses(TENANTS - 1).1;
        assert_eq!(last, Ipv4Addr::new(100, 127, 255, 254));
    }
}
