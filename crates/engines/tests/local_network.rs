//! Networks of sandboxed steps on the local engine: `none` gives a step
//! only a loopback of its own; `host` lets it reach other machines but
//! nothing on this one (its loopback, its own addresses). Another machine
//! is a network namespace of the test's, joined to this one by a veth pair,
//! with a server in it. Needs root (namespaces, veth, nftables); says so
//! and passes trivially otherwise.

#[macro_use]
#[allow(dead_code, unused_macros)]
mod contract;
mod local_setup;

use contract::{plan, run};
use couler_engines::{Network, RunOutcome, RunSpec};
use local_setup::*;
use std::net::TcpListener;
use std::process::{Child, Command};
use std::time::Duration;

/// Another machine: a network namespace with a TCP server, routed from
/// this one. Removed when dropped.
struct Peer {
    ns: String,
    address: String,
    port: u16,
    server: Child,
}

impl Peer {
    fn start() -> Peer {
        let id = std::process::id() % 10_000;
        let ns = format!("couler-peer-{id}");
        let link = format!("cpeer{id}");
        let (host, address) = (
            format!("10.231.{}.1", id % 250),
            format!("10.231.{}.2", id % 250),
        );
        let ip = |args: &[&str]| {
            let ok = Command::new("ip").args(args).status().unwrap().success();
            assert!(ok, "ip {args:?}");
        };
        let _ = Command::new("ip").args(["netns", "delete", &ns]).status();
        ip(&["netns", "add", &ns]);
        ip(&[
            "link", "add", &link, "type", "veth", "peer", "name", "eth0", "netns", &ns,
        ]);
        ip(&["addr", "add", &format!("{host}/30"), "dev", &link]);
        ip(&["link", "set", &link, "up"]);
        ip(&[
            "-n",
            &ns,
            "addr",
            "add",
            &format!("{address}/30"),
            "dev",
            "eth0",
        ]);
        ip(&["-n", &ns, "link", "set", "eth0", "up"]);
        ip(&["-n", &ns, "link", "set", "lo", "up"]);
        let port = 18_000 + (id % 1000) as u16;
        let server = Command::new("ip")
            .args([
                "netns",
                "exec",
                &ns,
                "python3",
                "-m",
                "http.server",
                "--bind",
            ])
            .arg(&address)
            .arg(port.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let peer = Peer {
            ns,
            address,
            port,
            server,
        };
        // Up once this machine can reach it.
        for _ in 0..100 {
            let target = format!("{}:{}", peer.address, peer.port);
            if std::net::TcpStream::connect_timeout(
                &target.parse().unwrap(),
                Duration::from_millis(100),
            )
            .is_ok()
            {
                return peer;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("the peer's server did not come up");
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
        let _ = Command::new("ip")
            .args(["netns", "delete", &self.ns])
            .status();
    }
}

/// This machine's own non-loopback IPv4 address.
fn own_address() -> String {
    let out = Command::new("ip")
        .args(["-4", "-o", "addr", "show", "scope", "global"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    text.lines()
        .filter(|l| !l.contains(" csb") && !l.contains(" cpeer"))
        .find_map(|l| {
            l.split_whitespace()
                .nth(3)?
                .split('/')
                .next()
                .map(str::to_owned)
        })
        .expect("a global IPv4 address")
}

fn connect(host: &str, port: u16) -> String {
    format!(
        "python3 -c \"import socket; socket.create_connection((\\\"{host}\\\", {port}), timeout=2)\" 2>/dev/null && echo open || echo closed"
    )
}

fn workflow(checks: &[(&str, String)]) -> String {
    let mut yaml = "apiVersion: couler.dev/v1alpha1\nname: network\nsteps:\n".to_owned();
    for (name, script) in checks {
        yaml += &format!(
            "  - name: {name}\n    container: {{image: x, command: [sh, -c, '{}']}}\n",
            script.replace('\'', "''")
        );
    }
    yaml
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn host_networking_reaches_other_machines_but_not_this_one() {
    // SAFETY: plain syscall.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("host networking needs root: not tested here");
        return;
    }
    let peer = Peer::start();
    // A service of this machine on every address, as Postgres may be.
    let listener = TcpListener::bind("0.0.0.0:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let own = own_address();
    let checks = [
        ("peer", connect(&peer.address, peer.port)),
        ("loopback", connect("127.0.0.1", port)),
        ("own-address", connect(&own, port)),
    ];

    let (_tmp, h) = setup_with("network-host", |c| c.sandbox.network = Network::Host);
    let engine = (h.engine)();
    let r = run(
        &*engine,
        &h.run_spec("host"),
        plan(&workflow(&checks)),
        vec![],
    )
    .await;
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
    assert_eq!(r.result("peer"), "open", "another machine is reachable");
    assert_eq!(
        r.result("loopback"),
        "closed",
        "this machine's loopback is not"
    );
    assert_eq!(
        r.result("own-address"),
        "closed",
        "nor this machine's own address"
    );

    let (_tmp, h) = setup("network-none");
    let engine = (h.engine)();
    let r = run(
        &*engine,
        &h.run_spec("none"),
        plan(&workflow(&checks)),
        vec![],
    )
    .await;
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
    for step in ["peer", "loopback", "own-address"] {
        assert_eq!(r.result(step), "closed", "{step} with no network");
    }
    // A tenant a platform admin gave host networking, on the same engine.
    let spec = RunSpec {
        network: Some(Network::Host),
        ..h.run_spec("tenant-host")
    };
    let r = run(&*engine, &spec, plan(&workflow(&checks)), vec![]).await;
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
    assert_eq!(
        [
            r.result("peer"),
            r.result("loopback"),
            r.result("own-address")
        ],
        ["open", "closed", "closed"]
    );
    drop(listener);
}
