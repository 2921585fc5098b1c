//! Attack atk22k, the lead's share: a `.pth` line Python 3.13 runs after
//! a `str.splitlines()` break (F7); lint-staged's `package.json` key hidden
//! past serde_json's depth limit behind a `\u002d` (F11); `package.json`
//! replaced by a link lint-staged reads whole (F12, direct mode). Judged
//! from outside: the file the host program reads is not the run's.

use crate::common::*;
use skarn_test_support::TempDir;

const LAYERS: [&str; 2] = ["cow", "direct"];

fn venv_site(ws: &std::path::Path) -> std::path::PathBuf {
    let lib = ws.join(".venv/lib/python3.13/site-packages");
    std::fs::create_dir_all(&lib).unwrap();
    std::fs::write(ws.join(".venv/pyvenv.cfg"), "home = /usr/bin\n").unwrap();
    lib
}

#[test]
fn a_pth_import_after_any_python_line_break_is_set_aside() {
    for layer in LAYERS {
        let t = TempDir::new("atk22k-f7");
        let (ws, home) = (t.dir("ws"), t.dir("home"));
        git(&ws, &["init", "-q"]);
        let lib = venv_site(&ws);
        let breaks = [
            "\\014",
            "\\013",
            "\\035",
            "\\302\\205",
            "\\342\\200\\250",
            "\\205",
        ];
        let mut plant = String::new();
        for (i, b) in breaks.iter().enumerate() {
            plant.push_str(&format!(
                "printf 'zz{b}import os\\n' > {}/p{i}.pth; ",
                lib.display()
            ));
        }
        plant.push_str("echo ran");
        let o = run_in(
            &ws,
            &home,
            &["--workspace-layer", layer],
            &["sh", "-c", &plant],
        );
        assert!(out(&o).contains("ran"), "{layer}: {}", err(&o));
        for (i, b) in breaks.iter().enumerate() {
            assert!(
                !lib.join(format!("p{i}.pth")).exists(),
                "{layer}: p{i}.pth ({b}) was left for host python: {}",
                err(&o)
            );
        }
    }
}

#[test]
fn a_lint_staged_key_serde_json_cannot_read_is_not_left_for_host_git() {
    let deep = format!(
        "{{\"name\":\"p\",\"private\":true,\"x\":{}{},\"lint\\u002dstaged\":{{\"*.js\":\"touch /tmp/never\"}}}}\n",
        "[".repeat(200),
        "]".repeat(200)
    );
    for layer in LAYERS {
        let t = TempDir::new("atk22k-f11");
        let (ws, home) = (t.dir("ws"), t.dir("home"));
        git(&ws, &["init", "-q"]);
        let host = "{\"name\":\"p\",\"private\":true}\n";
        std::fs::write(ws.join("package.json"), host).unwrap();
        let src = t.file("deep.json", &deep);
        let o = run_in(
            &ws,
            &home,
            &["--workspace-layer", layer, "--read", src.to_str().unwrap()],
            &[
                "sh",
                "-c",
                &format!("cp {} package.json; echo ran", src.display()),
            ],
        );
        assert!(out(&o).contains("ran"), "{layer}: {}", err(&o));
        let now = std::fs::read_to_string(ws.join("package.json")).unwrap_or_default();
        assert!(
            !now.contains("lint\\u002dstaged"),
            "{layer}: the run's package.json was left for host lint-staged: {}",
            err(&o)
        );
    }
}

/// The direct mode's share of F12 (the layer's is h22o's).
#[test]
fn a_package_json_replaced_by_a_link_is_not_left_for_host_git() {
    {
        let layer = "direct";
        let t = TempDir::new("atk22k-f12");
        let (ws, home) = (t.dir("ws"), t.dir("home"));
        git(&ws, &["init", "-q"]);
        std::fs::write(ws.join("package.json"), "{\"name\":\"p\"}\n").unwrap();
        let o = run_in(
            &ws,
            &home,
            &["--workspace-layer", layer],
            &[
                "sh",
                "-c",
                "echo '{\"*.js\":\"touch /tmp/never\"}' > pkg.json; ln -sf pkg.json package.json; echo ran",
            ],
        );
        assert!(out(&o).contains("ran"), "{layer}: {}", err(&o));
        let md = std::fs::symlink_metadata(ws.join("package.json"));
        assert!(
            md.is_ok_and(|m| m.is_file()),
            "{layer}: package.json is not the host's file after the run: {}",
            err(&o)
        );
    }
}

/// F8, F9: lint-staged's `package.yaml` / `package.yml`, husky 4's key of
/// `package.json`: host git hooks run what they name; the run's version is
/// not left there.
#[test]
fn hook_manager_configuration_in_package_files_is_not_left_for_host_git() {
    for layer in LAYERS {
        let t = TempDir::new("atk22k-f8");
        let (ws, home) = (t.dir("ws"), t.dir("home"));
        git(&ws, &["init", "-q"]);
        let host = "{\"name\":\"p\",\"husky\":{\"hooks\":{\"pre-commit\":\"echo user-hook\"}}}\n";
        std::fs::write(ws.join("package.json"), host).unwrap();
        std::fs::create_dir_all(ws.join("packages/a")).unwrap();
        let plant = "sed -i 's/echo user-hook/touch \\/tmp\\/never/' package.json; \
                     printf 'lint-staged:\\n  \"*.js\": \"touch /tmp/never\"\\n' > package.yaml; \
                     printf 'lint-staged:\\n  \"*.js\": \"touch /tmp/never\"\\n' > packages/a/package.yml; \
                     echo ran";
        let o = run_in(
            &ws,
            &home,
            &["--workspace-layer", layer],
            &["sh", "-c", plant],
        );
        assert!(out(&o).contains("ran"), "{layer}: {}", err(&o));
        assert_eq!(
            std::fs::read_to_string(ws.join("package.json")).unwrap_or_default(),
            host,
            "{layer}: husky's key was changed for host git: {}",
            err(&o)
        );
        assert!(
            !std::fs::read_to_string(ws.join("package.yaml"))
                .unwrap_or_default()
                .contains("never"),
            "{layer}: package.yaml was left for host lint-staged: {}",
            err(&o)
        );
        if layer == "cow" {
            assert!(
                !ws.join("packages/a/package.yml").exists(),
                "{layer}: a nested package.yml was left for host lint-staged: {}",
                err(&o)
            );
        }
    }
}
