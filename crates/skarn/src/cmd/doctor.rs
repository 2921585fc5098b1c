//! `skarn doctor`: what this host enforces, and (`--self-test`) real escape
//! attempts through the sandbox against listeners started on the host.

use std::io::Read;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use serde::Serialize;
use skarn_sandbox::{HostFacts, NetPolicy, Policy};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print the findings as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// Really attempt escapes through the sandbox and report blocked/ESCAPED
    /// for each; exits 1 if anything escaped.
    #[arg(long)]
    pub self_test: bool,
    /// Gateway configuration whose MCP servers to start and report on
    /// (skipped when the default file does not exist).
    #[arg(long, short = 'c', env = "SKARN_CONFIG", default_value = "skarn.toml")]
    pub config: PathBuf,
}

#[derive(Debug, Serialize)]
struct Findings {
    backend: &'static str,
    arch: String,
    uid: u32,
    landlock_abi: u32,
    seccomp: bool,
    user_namespaces: bool,
    namespaces: Vec<(String, bool)>,
    pids_cgroup: Option<String>,
    /// Where `--memory` gets a per-run memory cgroup (`None`: RLIMIT_AS).
    memory_cgroup: Option<String>,
    status: skarn_sandbox::Status,
    net_policies: Vec<(String, Vec<String>)>,
    degraded: Vec<String>,
    seccomp_denied: Vec<String>,
    /// What `isolation = auto` picks for Code Mode, and the worker self-test.
    code_mode: skarn_worker::DoctorSummary,
    /// Each configured MCP server with its health and tool count (`None`:
    /// no configuration file).
    servers: Option<Vec<skarn_gateway::ServerHealth>>,
}

fn findings(servers: Option<Vec<skarn_gateway::ServerHealth>>) -> Findings {
    let host = HostFacts::probe();
    let kinds = skarn_sandbox::ns::probe_kinds(host.needs_userns);
    let userns = kinds.iter().any(|(n, ok)| *n == "user" && *ok);
    let namespaces = kinds
        .into_iter()
        .map(|(n, ok)| (n.to_string(), ok))
        .collect();
    // A typical project directory (planning is pure: it need not exist);
    // the host's temporary directory itself would be reported as broad.
    let ws = std::env::temp_dir().join("skarn-doctor-project");
    let argv = vec!["true".into()];
    let mut net_policies = Vec::new();
    let mut degraded = Vec::new();
    let mut status = skarn_sandbox::Status::NotEnforced;
    for net in [
        NetPolicy::DenyAll,
        NetPolicy::AllowLoopback,
        NetPolicy::AllowOutbound,
        NetPolicy::AllowAll,
        NetPolicy::AllowHosts(skarn_sandbox::HostList {
            allow: vec!["example.com".into()],
            ..Default::default()
        }),
    ] {
        let mut p = Policy::new(&ws);
        p.net = net.clone();
        match skarn_sandbox::plan(&p, &host, &argv) {
            Ok(plan) => {
                let notes: Vec<String> = plan
                    .report
                    .notes
                    .iter()
                    .filter(|n| n.starts_with("net ") || n.contains("net "))
                    .cloned()
                    .collect();
                if net == NetPolicy::DenyAll {
                    status = plan.report.status;
                    degraded = plan
                        .report
                        .notes
                        .iter()
                        .filter(|n| !n.starts_with("net deny: empty"))
                        .cloned()
                        .collect();
                }
                net_policies.push((net.as_str().to_string(), notes));
            }
            Err(e) => net_policies.push((net.as_str().to_string(), vec![e.to_string()])),
        }
    }
    Findings {
        backend: "linux",
        arch: host.arch.clone(),
        uid: host.uid,
        landlock_abi: host.landlock_abi,
        seccomp: host.seccomp,
        user_namespaces: userns,
        namespaces,
        pids_cgroup: host.cgroup_pids.as_ref().map(|p| p.display().to_string()),
        memory_cgroup: host.cgroup_memory.as_ref().map(|p| p.display().to_string()),
        status,
        net_policies,
        degraded,
        seccomp_denied: skarn_sandbox::seccomp::DENY_LIST
            .iter()
            .map(|r| r.name.to_string())
            .collect(),
        code_mode: skarn_worker::doctor_summary(),
        servers,
    }
}

/// Start the configured servers and report each one's health. A missing
/// default file means "no servers configured"; a missing file the user
/// named, or a bad one, is an error.
fn server_health(args: &Args) -> anyhow::Result<Option<Vec<skarn_gateway::ServerHealth>>> {
    let explicit = args.config != Path::new("skarn.toml");
    if !explicit && !args.config.exists() {
        return Ok(None);
    }
    if !args.config.exists() {
        anyhow::bail!("{}: no such configuration file", args.config.display());
    }
    Ok(Some(skarn_gateway::health_report(&args.config)?))
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let f = findings(server_health(&args)?);
    if args.json && !args.self_test {
        println!("{}", serde_json::to_string_pretty(&f)?);
        return Ok(ExitCode::SUCCESS);
    }
    if !args.json {
        println!("backend: {} ({})", f.backend, f.arch);
        println!("status of the default policy: {:?}", f.status);
        println!(
            "landlock: {}",
            if f.landlock_abi > 0 {
                format!("ABI {}", f.landlock_abi)
            } else {
                "unavailable".into()
            }
        );
        println!(
            "seccomp-bpf: {}",
            if f.seccomp {
                "available"
            } else {
                "unavailable"
            }
        );
        println!(
            "user namespaces: {}",
            if f.user_namespaces {
                "work"
            } else {
                "unavailable"
            }
        );
        for (n, ok) in &f.namespaces {
            println!("  {n} namespace: {}", if *ok { "works" } else { "FAILS" });
        }
        println!(
            "pids cgroup: {}",
            f.pids_cgroup
                .as_deref()
                .unwrap_or("none (max_procs via RLIMIT_NPROC)")
        );
        println!(
            "memory cgroup: {}",
            f.memory_cgroup
                .as_deref()
                .unwrap_or("none (--memory via RLIMIT_AS + RLIMIT_DATA per process)")
        );
        println!("net policies on this host:");
        for (n, notes) in &f.net_policies {
            println!("  {n}: {}", notes.join("; "));
        }
        if f.degraded.is_empty() {
            println!("degraded: nothing");
        } else {
            for d in &f.degraded {
                println!("degraded: {d}");
            }
        }
        println!("seccomp denies: {}", f.seccomp_denied.join(" "));
        print!("{}", f.code_mode.to_text());
        super::doctor_servers::print(&args.config, f.servers.as_deref());
    }
    if !args.self_test {
        return Ok(ExitCode::SUCCESS);
    }
    let mut results = self_test()?;
    // The Code Mode worker's own escape attempts count too.
    results.extend(f.code_mode.selftest.iter().map(|a| Attempt {
        attempt: format!("code mode worker: {}", a.what),
        escaped: !a.blocked,
        detail: a.detail.clone(),
    }));
    let escaped = results.iter().filter(|r| r.escaped).count();
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(
                &serde_json::json!({ "findings": f, "self_test": results })
            )?
        );
    } else {
        println!("self-test:");
        for r in &results {
            println!(
                "  {:<8} {:<58} {}",
                if r.escaped { "ESCAPED" } else { "blocked" },
                r.attempt,
                r.detail
            );
        }
        println!("self-test: {} attempts, {} escaped", results.len(), escaped);
    }
    Ok(if escaped == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

#[derive(Debug, Serialize)]
struct Attempt {
    attempt: String,
    escaped: bool,
    detail: String,
}

struct Scratch(PathBuf);
impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn sandboxed(exe: &Path, root: &Path, net: &str, extra: &[&str], probe: &[&str]) -> (i32, String) {
    let out = Command::new(exe)
        .arg("run")
        .arg("--no-config")
        .arg("--preset")
        .arg("none")
        .arg("--workspace")
        .arg(root.join("ws"))
        .arg("--net")
        .arg(net)
        .arg("--exec")
        .arg(exe)
        .args(extra)
        .arg("--")
        .arg(exe)
        .arg("__sandbox-helper")
        .arg("probe")
        .args(probe)
        .env("HOME", root.join("home"))
        .stdin(Stdio::null())
        .output();
    match out {
        Ok(o) => (
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr),
        ),
        Err(e) => (-1, e.to_string()),
    }
}

/// The probe's own view, worded so it is not mistaken for the verdict
/// (which is always decided from outside).
fn first_line(s: &str) -> String {
    let l = s.lines().next().unwrap_or("");
    let l = if let Some(r) = l.strip_prefix("ESCAPED ") {
        format!("inside: succeeded: {r}")
    } else if let Some(r) = l.strip_prefix("blocked ") {
        format!("inside: failed: {r}")
    } else {
        format!("inside: {l}")
    };
    l.chars().take(90).collect()
}

/// Run the vsock probe; while it runs (it holds the port until its stdin
/// closes, if it got it), check from outside whether the port is taken.
fn vsock_attempt(exe: &Path, root: &Path, net: &str) -> (bool, String) {
    use std::io::BufRead;
    let port = 50_000 + std::process::id() % 10_000;
    let child = Command::new(exe)
        .args(["run", "--no-config", "--preset", "none", "--workspace"])
        .arg(root.join("ws"))
        .args(["--net", net, "--exec"])
        .arg(exe)
        .arg("--")
        .arg(exe)
        .args(["__sandbox-helper", "probe", "vsock", &port.to_string()])
        .env("HOME", root.join("home"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn();
    let Ok(mut child) = child else {
        return (false, "could not start the probe".into());
    };
    let mut line = String::new();
    if let Some(o) = child.stdout.take() {
        let _ = std::io::BufReader::new(o).read_line(&mut line);
    }
    let free = skarn_sandbox::probe::host_can_bind_vsock(port);
    drop(child.stdin.take());
    let _ = child.wait();
    match free {
        Some(free) => (!free, first_line(&line)),
        None => (
            line.starts_with("ESCAPED"),
            format!(
                "{} (no vsock on the host: inside view only)",
                first_line(&line)
            ),
        ),
    }
}

fn self_test() -> anyhow::Result<Vec<Attempt>> {
    use std::net::{TcpListener, UdpSocket};
    let exe = std::fs::canonicalize("/proc/self/exe")?;
    let root = std::env::temp_dir().join(format!("skarn-selftest-{}", std::process::id()));
    std::fs::create_dir_all(&root)?;
    let scratch = Scratch(root.clone());
    for d in ["ws", "outside", "home/.ssh", "sock"] {
        std::fs::create_dir_all(root.join(d))?;
    }
    let secret = "skarn-selftest-SECRET-7f3a";
    std::fs::write(root.join("home/.ssh/id_ed25519"), secret)?;
    let tcp = TcpListener::bind("127.0.0.1:0")?;
    tcp.set_nonblocking(true)?;
    let tcp_addr = tcp.local_addr()?.to_string();
    let udp = UdpSocket::bind("127.0.0.1:0")?;
    udp.set_nonblocking(true)?;
    let udp_addr = udp.local_addr()?.to_string();
    let sock_path = root.join("sock/host.sock");
    let unix = UnixListener::bind(&sock_path)?;
    unix.set_nonblocking(true)?;
    let abs_name = format!("skarn-selftest-{}", std::process::id());
    let abs = {
        use std::os::linux::net::SocketAddrExt;
        let a = std::os::unix::net::SocketAddr::from_abstract_name(abs_name.as_bytes())?;
        UnixListener::bind_addr(&a)?
    };
    abs.set_nonblocking(true)?;
    let mut victim = Command::new("sleep")
        .arg("120")
        .stdin(Stdio::null())
        .spawn()?;
    let victim_pid = victim.id().to_string();

    let tcp_got = |l: &TcpListener| l.accept().is_ok();
    let unix_got = |l: &UnixListener| -> bool {
        match l.accept() {
            Ok((mut s, _)) => {
                let mut b = Vec::new();
                let _ = s.set_nonblocking(false);
                let _ = s.set_read_timeout(Some(std::time::Duration::from_millis(200)));
                let _ = s.read_to_end(&mut b);
                true
            }
            Err(_) => false,
        }
    };
    let mut out = Vec::new();
    let mut push = |attempt: &str, escaped: bool, detail: String| {
        out.push(Attempt {
            attempt: attempt.into(),
            escaped,
            detail,
        })
    };
    let r = |s: &str| root.join(s).display().to_string();

    let target = r("outside/escape.txt");
    let (_, o) = sandboxed(&exe, &root, "deny", &[], &["write", &target]);
    push(
        "write a file outside the workspace",
        Path::new(&target).exists(),
        first_line(&o),
    );

    let target = r("home/planted");
    let home = r("home");
    let (_, o) = sandboxed(&exe, &root, "deny", &["--read", &home], &["write", &target]);
    push(
        "write into a read-only grant",
        Path::new(&target).exists(),
        first_line(&o),
    );

    let key = r("home/.ssh/id_ed25519");
    let (_, o) = sandboxed(&exe, &root, "deny", &["--read", &home], &["read", &key]);
    push(
        "read ~/.ssh key inside a granted home",
        o.contains(secret),
        first_line(&o),
    );

    for net in ["deny", "loopback"] {
        let (_, o) = sandboxed(&exe, &root, net, &[], &["tcp", &tcp_addr]);
        push(
            &format!("TCP to a host listener (--net {net})"),
            tcp_got(&tcp),
            first_line(&o),
        );
    }
    for net in ["deny", "loopback"] {
        let (_, o) = sandboxed(&exe, &root, net, &[], &["udp", &udp_addr]);
        let mut b = [0u8; 64];
        push(
            &format!("UDP to a host socket (--net {net})"),
            udp.recv(&mut b).is_ok(),
            first_line(&o),
        );
    }
    for net in ["deny", "loopback", "outbound", "all"] {
        let (_, o) = sandboxed(&exe, &root, net, &[], &["abstract", &abs_name]);
        push(
            &format!("abstract unix socket on the host (--net {net})"),
            unix_got(&abs),
            first_line(&o),
        );
    }
    for net in ["deny", "outbound"] {
        let sp = sock_path.display().to_string();
        let (_, o) = sandboxed(&exe, &root, net, &[], &["unix", &sp]);
        push(
            &format!("pathname unix socket outside grants (--net {net})"),
            unix_got(&unix),
            first_line(&o),
        );
    }
    let (_, o) = sandboxed(&exe, &root, "outbound", &[], &["tcp-bind", "0.0.0.0:0"]);
    push(
        "inbound TCP bind (--net outbound)",
        o.starts_with("ESCAPED"),
        first_line(&o),
    );
    for net in ["deny", "outbound"] {
        let (_, o) = sandboxed(&exe, &root, net, &[], &["kill", &victim_pid]);
        let alive = victim.try_wait().map(|s| s.is_none()).unwrap_or(false);
        push(
            &format!("signal a host process (--net {net})"),
            !alive,
            first_line(&o),
        );
    }
    let (_, o) = sandboxed(&exe, &root, "outbound", &[], &["ptrace", &victim_pid]);
    push(
        "ptrace a host process",
        o.starts_with("ESCAPED"),
        first_line(&o),
    );
    for (name, probe) in [
        ("io_uring_setup", "io_uring"),
        ("unshare a new user namespace", "unshare"),
        ("ioctl TIOCLINUX (seccomp)", "tioclinux"),
    ] {
        let (_, o) = sandboxed(&exe, &root, "deny", &[], &[probe, ""]);
        push(name, o.starts_with("ESCAPED"), first_line(&o));
    }

    // A set-uid file created through openat2 (mode behind a pointer):
    // decided by the file's mode, from outside.
    let target = r("ws/suid-openat2");
    let (_, o) = sandboxed(&exe, &root, "deny", &[], &["setuid-openat2", &target]);
    let setid = {
        use std::os::unix::fs::PermissionsExt;
        std::fs::symlink_metadata(&target)
            .map(|m| m.permissions().mode() & 0o6000 != 0)
            .unwrap_or(false)
    };
    push("set-uid file via openat2", setid, first_line(&o));

    // A vsock listener (the vsock port space is shared with the host):
    // while the probe would hold it, the host binds the same port.
    for net in ["deny", "loopback"] {
        let (escaped, detail) = vsock_attempt(&exe, &root, net);
        push(&format!("vsock listener (--net {net})"), escaped, detail);
    }

    // 1 GiB MAP_GROWSDOWN (counted as stack, not data) under --memory 64:
    // decided by the exit status and the probe's last word.
    let (code, o) = sandboxed(
        &exe,
        &root,
        "deny",
        &["--memory", "64"],
        &["growsdown", "1024"],
    );
    push(
        "touch 1 GiB MAP_GROWSDOWN under --memory 64",
        code == 0 && o.contains("touched 1024 MiB"),
        format!("exit {code}; {}", first_line(&o)),
    );

    // A persistence path that does not exist yet (read by direnv on the
    // host): decided by whether a regular file is there afterwards.
    let target = r("ws/.envrc");
    let (_, o) = sandboxed(&exe, &root, "deny", &[], &["write", &target]);
    push(
        "create a missing persistence file (.envrc) in the workspace",
        std::fs::symlink_metadata(&target).is_ok_and(|m| m.is_file()),
        first_line(&o),
    );

    // Move the parent of a --deny-read file aside, so that a later run
    // would not find it where it masks it: decided by where it is after.
    std::fs::create_dir_all(root.join("ws/conf"))?;
    std::fs::write(root.join("ws/conf/secret.env"), secret)?;
    let deny = r("ws/conf/secret.env");
    let (_, o) = sandboxed(
        &exe,
        &root,
        "deny",
        &["--deny-read", &deny],
        &["rename", &r("ws/conf"), &r("ws/moved")],
    );
    push(
        "rename the parent of a masked file",
        !Path::new(&deny).exists() || root.join("ws/moved").exists(),
        first_line(&o),
    );

    // A grant through a link a command planted in the workspace, pointing
    // at the secret: refused before anything runs.
    let link = root.join("ws/keys");
    std::os::unix::fs::symlink(root.join("home/.ssh"), &link)?;
    let (_, o) = sandboxed(
        &exe,
        &root,
        "deny",
        &["--read", &link.display().to_string()],
        &["read", &r("ws/keys/id_ed25519")],
    );
    push(
        "grant through a symlink planted in the workspace",
        o.contains(secret),
        first_line(&o),
    );

    // ---- egress (issue 11): one allowed and one denied host ----
    let other = TcpListener::bind("127.0.0.1:0")?;
    other.set_nonblocking(true)?;
    let other_addr = other.local_addr()?.to_string();
    let allow = format!("allow:{tcp_addr}");
    let (_, o) = sandboxed(&exe, &root, &allow, &[], &["proxy-connect", &tcp_addr]);
    let reached = wait_accept(&tcp);
    push(
        "allowed host unreachable through the proxy (--net allow)",
        !reached,
        first_line(&o),
    );
    let (_, o) = sandboxed(&exe, &root, &allow, &[], &["proxy-connect", &other_addr]);
    push(
        "unlisted host through the proxy (--net allow)",
        wait_accept(&other),
        first_line(&o),
    );
    let (_, o) = sandboxed(&exe, &root, &allow, &[], &["tcp", &tcp_addr]);
    push(
        "direct TCP bypassing the proxy (--net allow)",
        tcp_got(&tcp),
        first_line(&o),
    );
    let _ = victim.kill();
    let _ = victim.wait();
    drop(scratch);
    Ok(out)
}

/// Whether a connection is waiting on `l` (a short grace for the proxy's
/// connect to land).
fn wait_accept(l: &std::net::TcpListener) -> bool {
    for _ in 0..20 {
        if l.accept().is_ok() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    false
}
