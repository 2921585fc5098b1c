//! How layers combine: scalars from the last layer, lists added up in
//! order, flags over files, presets replaced, and where each value came
//! from.

use super::*;

#[test]
fn every_scalar_takes_the_last_layer_in_either_order() {
    let t = Tmp::new();
    let ws = Workspace::fixed(&t.0, "test");
    let a = layer(&t.0, "a.toml", A);
    let b = layer(&t.0, "b.toml", B);
    let a_at = |line: u32| format!("{}:{line}:", t.0.join("a.toml").display());
    let b_at = |line: u32| format!("{}:{line}:", t.0.join("b.toml").display());

    let (p, prov) = Policy::from_layers(&ws, &[a.clone(), b.clone()], &host(&t.0)).unwrap();
    assert_eq!(p.net, NetPolicy::AllowLoopback);
    assert_eq!(p.limits.timeout_secs, Some(30));
    assert_eq!(p.limits.memory_mb, Some(2048));
    assert_eq!(p.limits.max_procs, Some(20));
    assert_eq!(p.limits.max_file_size_mb, Some(2048));
    assert!(p.protect_persistence && p.fail_closed && p.private_home);
    assert!(!p.allow_home_workspace);
    for (key, line) in [
        ("net", 2),
        ("timeout", 3),
        ("memory", 4),
        ("max_procs", 5),
        ("max_file_size", 6),
    ] {
        assert!(
            prov.get(key).starts_with(&b_at(line)),
            "{key}: {}",
            prov.get(key)
        );
        assert_eq!(p.sources[key], prov.get(key));
    }
    let b_file = t.0.join("b.toml").display().to_string();
    for key in [
        "protect_persistence",
        "fail_closed",
        "allow_home_workspace",
        "private_home",
    ] {
        assert_eq!(prov.get(key), b_file, "{key}");
    }
    assert!(
        prov.get("preset").starts_with(&b_at(11)),
        "{}",
        prov.get("preset")
    );

    let (q, prov) = Policy::from_layers(&ws, &[b, a], &host(&t.0)).unwrap();
    assert_eq!(q.net, NetPolicy::AllowOutbound);
    assert_eq!(q.limits.timeout_secs, Some(600));
    assert_eq!(q.limits.memory_mb, Some(1024));
    assert_eq!(q.limits.max_procs, Some(10));
    assert_eq!(q.limits.max_file_size_mb, Some(10));
    assert!(!q.protect_persistence && !q.fail_closed && !q.private_home);
    assert!(q.allow_home_workspace);
    assert!(prov.get("net").starts_with(&a_at(2)));
    assert!(prov.get("preset").starts_with(&a_at(11)));
    assert_ne!(scalars(&p), scalars(&q));
}

#[test]
fn flags_override_every_file_and_defaults_say_default() {
    let t = Tmp::new();
    let ws = Workspace::fixed(&t.0, "test");
    let (d, prov) = Policy::from_layers(&ws, &[], &host(&t.0)).unwrap();
    let def = Policy::new(&t.0);
    assert_eq!(scalars(&d), scalars(&def));
    for key in ["net", "timeout", "memory", "preset", "private_home"] {
        assert_eq!(prov.get(key), "default", "{key}");
    }
    assert!(!d.sources.contains_key("net"));

    let a = layer(&t.0, "a.toml", A);
    let mut f = Layer::flags();
    f.net_flags(&["all".into()], &[], None, None).unwrap();
    for k in LimitKey::ALL {
        f.limit_flag(k, Some(0));
    }
    Layer::bool_flag(&mut f.protect_persistence, true, true, "--x");
    Layer::bool_flag(&mut f.fail_closed, true, true, "--y");
    Layer::bool_flag(&mut f.private_home, false, true, "--not-given");
    f.preset_flags(&["python".into()]).unwrap();
    let (p, prov) = Policy::from_layers(&ws, &[a, f], &host(&t.0)).unwrap();
    assert_eq!(p.net, NetPolicy::AllowAll);
    assert_eq!(prov.get("net"), "--net");
    // 0 = no limit, with the flag as provenance.
    assert_eq!(p.limits.timeout_secs, None);
    assert_eq!(p.limits.memory_mb, None);
    assert_eq!(prov.get("max_procs"), "--max-procs");
    assert_eq!(p.sources["max_file_size"], "--max-file-size");
    assert!(p.protect_persistence && p.fail_closed);
    // A flag not given leaves the file's value.
    assert!(!p.private_home);
    assert_eq!(prov.get("preset"), "--preset");
}

#[test]
fn lists_add_up_in_layer_order() {
    let t = Tmp::new();
    let ws = Workspace::fixed(&t.0, "test");
    let a = layer(&t.0, "a.toml", A);
    let b = layer(&t.0, "b.toml", B);
    let mut f = Layer::flags();
    let at = FlagContext {
        cwd: &t.0,
        workspace: &t.0,
        home: None,
    };
    f.grant_flag(GrantFlag::Read, Path::new("."), at).unwrap();
    f.grant_flag(GrantFlag::DenyRead, Path::new("x"), at)
        .unwrap();
    f.allow_env
        .push(Sourced::new("F_TOKEN".into(), "--allow-env"));
    let (p, prov) = Policy::from_layers(&ws, &[a, b, f], &host(&t.0)).unwrap();
    let paths = |g: &[Grant]| g.iter().map(|g| g.path.clone()).collect::<Vec<_>>();
    assert_eq!(
        paths(&p.read),
        [t.0.join("ra"), t.0.join("rb"), t.0.clone()]
    );
    assert_eq!(paths(&p.write), [t.0.join("wa"), t.0.join("wb")]);
    assert_eq!(paths(&p.exec), [t.0.join("xa"), t.0.join("xb")]);
    assert_eq!(
        paths(&p.deny_read),
        [t.0.join("da"), t.0.join("db"), t.0.join("x")]
    );
    assert_eq!(p.read[2].source, "--read");
    assert!(p.read[0].source.contains("a.toml:12:"));
    assert_eq!(p.allow_env, ["A_TOKEN", "B_TOKEN", "F_TOKEN"]);
    assert_eq!(prov.get("allow_env.F_TOKEN"), "--allow-env");
    assert!(prov.get("allow_env.A_TOKEN").ends_with("a.toml"));
}

#[test]
fn host_lists_add_up_and_allow_hosts_implies_allow() {
    let t = Tmp::new();
    let ws = Workspace::fixed(&t.0, "test");
    let u = layer(&t.0, "u.toml", "[run]\nallow_hosts = [\"a.test\"]\n");
    let w = layer(
        &t.0,
        "w.toml",
        "[run]\nnet = \"allow:b.test\"\ndeny_hosts = [\"x.a.test\"]\n",
    );
    let mut f = Layer::flags();
    f.net_flags(
        &["allow:c.test".into(), "allow:d.test".into()],
        &["y.c.test".into()],
        Some(5),
        Some(0),
    )
    .unwrap();
    let (p, prov) = Policy::from_layers(&ws, &[u.clone(), w, f], &host(&t.0)).unwrap();
    let NetPolicy::AllowHosts(l) = &p.net else {
        panic!("{:?}", p.net)
    };
    assert_eq!(l.allow, ["a.test", "b.test", "c.test", "d.test"]);
    assert_eq!(l.deny, ["x.a.test", "y.c.test"]);
    assert_eq!(l.max_total_bytes, Some(5 << 20));
    assert_eq!(l.max_connections, None);
    assert_eq!(prov.get("net"), "--net");
    assert_eq!(prov.get("deny_hosts.y.c.test"), "--deny-host");
    assert!(prov.get("allow_hosts.a.test").contains("u.toml:2:"));
    // `allow_hosts` alone selects allow:..., located at the key.
    let (p, prov) = Policy::from_layers(&ws, std::slice::from_ref(&u), &host(&t.0)).unwrap();
    assert!(matches!(p.net, NetPolicy::AllowHosts(_)));
    assert!(
        prov.get("net").contains("u.toml:2:16"),
        "{}",
        prov.get("net")
    );
    // A later file's deny wins over an earlier allow; its lists go unused.
    let d = layer(&t.0, "d.toml", "[run]\nnet = \"deny\"\n");
    let (p, _) = Policy::from_layers(&ws, &[u, d], &host(&t.0)).unwrap();
    assert_eq!(p.net, NetPolicy::DenyAll);
    assert!(p.read.is_empty(), "no DNS grant without host networking");
    // 0 means no limit for the byte budget too.
    let mut f = Layer::flags();
    f.net_flags(&["allow:c.test".into()], &[], Some(0), Some(0))
        .unwrap();
    let (p, _) = Policy::from_layers(&ws, &[f], &host(&t.0)).unwrap();
    let NetPolicy::AllowHosts(l) = &p.net else {
        panic!("{:?}", p.net)
    };
    assert_eq!((l.max_total_bytes, l.max_connections), (None, None));
}

#[test]
fn dns_grant_only_with_host_networking() {
    let t = Tmp::new();
    let ws = Workspace::fixed(&t.0, "test");
    for (net, granted) in [
        ("deny", false),
        ("loopback", false),
        ("outbound", true),
        ("all", true),
        ("allow:a.test", false),
    ] {
        let mut f = Layer::flags();
        f.net_flags(&[net.into()], &[], None, None).unwrap();
        let (p, _) = Policy::from_layers(&ws, &[f], &host(&t.0)).unwrap();
        let dns = p
            .read
            .iter()
            .any(|g| g.path == Path::new("/run/resolv/resolv.conf") && g.source.contains("DNS"));
        assert_eq!(dns, granted, "{net}");
    }
}

#[test]
fn presets_replace_and_empty_means_auto() {
    let t = Tmp::new();
    let home = Tmp::new();
    std::fs::create_dir_all(home.0.join(".npm/_cacache")).unwrap();
    std::fs::create_dir_all(home.0.join(".cache/pip")).unwrap();
    std::fs::write(t.0.join("package.json"), "{}").unwrap();
    let ws = Workspace::fixed(&t.0, "test");
    let mut h = host(&t.0);
    h.home = Some(home.0.clone());
    let overlays = |layers: &[Layer]| {
        let (p, _) = Policy::from_layers(&ws, layers, &h).unwrap();
        p.overlay
            .iter()
            .map(|g| g.source.clone())
            .collect::<Vec<_>>()
    };
    // Default: auto detects node from package.json.
    assert_eq!(overlays(&[]), ["preset node (detected, default)"]);
    let py = layer(&t.0, "p.toml", "[run]\npreset = \"python\"\n");
    let none = layer(&t.0, "n.toml", "[run]\npreset = \"none\"\n");
    let empty = layer(&t.0, "e.toml", "[run]\npreset = []\n");
    // (pip's cache, and pyenv's shims where the host has pyenv.)
    let o = overlays(&[none.clone(), py.clone()]);
    assert!(!o.is_empty());
    assert!(
        o.iter()
            .all(|s| s.starts_with("preset python (") && s.contains("p.toml:2:10")),
        "{o:?}"
    );
    assert!(overlays(&[py.clone(), none]).is_empty());
    assert_eq!(overlays(&[py, empty]), ["preset node (detected, default)"]);
}

#[test]
fn registries_expand_from_presets_and_empty_allow_is_an_error() {
    let t = Tmp::new();
    let ws = Workspace::fixed(&t.0, "test");
    let mut f = Layer::flags();
    f.net_flags(&["allow:registries".into()], &[], None, None)
        .unwrap();
    f.preset_flags(&["none".into()]).unwrap();
    let e = Policy::from_layers(&ws, &[f.clone()], &host(&t.0)).unwrap_err();
    assert!(e.to_string().contains("no host to allow"), "{e}");
    // The gateway expands `registries` itself.
    let mut h = host(&t.0);
    h.expand_registries = false;
    let (p, _) = Policy::from_layers(&ws, &[f], &h).unwrap();
    let NetPolicy::AllowHosts(l) = &p.net else {
        panic!()
    };
    assert_eq!(l.allow, ["registries"]);
}
