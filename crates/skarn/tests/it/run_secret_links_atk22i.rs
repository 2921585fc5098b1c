//! `skarn run`, issue 22 (attack atk22i F3, F5): hard links of hidden
//! files. A secret file a caller variable or the user's git
//! configuration names outside every grant, and one deep inside a secret
//! directory with many entries before it, each have a hard link in the
//! workspace; from outside: the run's output never holds the content, in
//! either layer.

use crate::common::*;
use skarn_test_support::TempDir;

const LAYERS: &[&str] = &["cow", "direct"];

fn cat_in_run(
    ws: &std::path::Path,
    home: &std::path::Path,
    layer: &str,
    files: &[&str],
    env: &[(&str, String)],
) -> String {
    let script = format!("cat {} ; echo DONE", files.join(" "));
    let mut c = run_command(
        ws,
        home,
        &["--workspace-layer", layer],
        &["sh", "-c", &script],
    );
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    format!("{}{}", out(&o), err(&o))
}

#[test]
fn hard_links_of_files_variables_and_git_name_are_hidden() {
    for layer in LAYERS {
        let t = TempDir::new("f5links");
        let home = t.dir("home");
        let ws = t.dir("ws");
        t.dir("priv");
        let secrets = [
            ("priv/creds", "ENVFILE-SECRET-1"),
            ("priv/pg", "PGPASS-SECRET-2"),
            ("priv/gitcreds", "GITCRED-SECRET-3"),
            ("priv/key.pem", "SSLKEY-SECRET-4"),
        ];
        for (p, v) in secrets {
            t.file(p, format!("{v}\n"));
        }
        t.file(
            "home/.gitconfig",
            format!(
                "[credential]\n\thelper = store --file={g}\n[http]\n\tsslKey = {k}\n",
                g = t.join("priv/gitcreds").display(),
                k = t.join("priv/key.pem").display()
            ),
        );
        for (i, (p, _)) in secrets.iter().enumerate() {
            std::fs::hard_link(t.join(p), ws.join(format!("l{i}.txt"))).unwrap();
        }
        let env = [
            (
                "AWS_SHARED_CREDENTIALS_FILE",
                t.join("priv/creds").display().to_string(),
            ),
            ("PGPASSFILE", t.join("priv/pg").display().to_string()),
        ];
        let said = cat_in_run(
            &ws,
            &home,
            layer,
            &["l0.txt", "l1.txt", "l2.txt", "l3.txt"],
            &env,
        );
        assert!(
            said.contains("DONE"),
            "{layer}: the command did not run: {said}"
        );
        for (_, v) in secrets {
            assert!(
                !said.contains(v),
                "{layer}: a hard link of a hidden file was read: {said}"
            );
        }
    }
}

#[test]
fn a_hard_link_deep_in_a_large_secret_directory_is_hidden() {
    for layer in LAYERS {
        let t = TempDir::new("f3links");
        let home = t.dir("home");
        let ws = t.dir("ws");
        let g = t.dir("home/.config/gcloud");
        t.file(
            "home/.config/gcloud/legacy_credentials/me@example.com/adc.json",
            "{\"refresh_token\":\"GCLOUD-REFRESH-SECRET\"}\n",
        );
        // A month of logs before it (more than the old 128-entry bound).
        for d in 1..=30 {
            for i in 1..=8 {
                t.file(
                    format!("home/.config/gcloud/logs/2026.11.{d:02}/{i}.log"),
                    "",
                );
            }
        }
        std::fs::hard_link(
            g.join("legacy_credentials/me@example.com/adc.json"),
            ws.join("notes.json"),
        )
        .unwrap();
        let said = cat_in_run(&ws, &home, layer, &["notes.json"], &[]);
        assert!(
            said.contains("DONE"),
            "{layer}: the command did not run: {said}"
        );
        assert!(
            !said.contains("GCLOUD-REFRESH-SECRET"),
            "{layer}: a hard link of a file deep in a secret directory was read: {said}"
        );
    }
}
