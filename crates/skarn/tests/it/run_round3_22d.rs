//! `skarn run`, issue 22 (helper h22d): what SECURITY.md still listed open
//! for run round 3. Each attack is made with a real `skarn run` in both
//! workspace layers and judged from outside: the host program did not run
//! the planted code, the file stayed as it was.
//! - `git-<word>` and the other commands a tool finds on `PATH` by prefix;
//! - mise's per-environment and `.config/mise` files;
//! - a start-up module an interpreter lacks (`readline`) left in a
//!   directory a plain `.pth` line names;
//! - the system's schedulers and service managers (`/etc/cron.d`,
//!   `/etc/systemd/user`) naming a script in the workspace.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::*;
use skarn_test_support::TempDir;

/// The two workspace layers.
const LAYERS: [&[&str]; 2] = [
    &["--workspace-layer", "direct"],
    &["--workspace-layer", "cow"],
];

/// Removes a file made for a test in a shared directory, passed or not.
struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// `git <word>` runs `git-<word>` from `PATH`, installed or not: a run
/// that makes `bin/git-sync` (and `bin/git-remote-evil`, which a
/// `evil::` remote runs) in a `PATH` directory missing before the run does
/// not leave them for the host's next `git sync`.
#[test]
fn commands_git_finds_by_prefix_cannot_be_planted_on_path() {
    if !host_has("git", "--version") {
        skarn_test_support::skip!("no git on the host");
    }
    for flags in LAYERS {
        let t = TempDir::new("h22d-gitprefix");
        let home = t.dir("home");
        let ws = t.dir("ws");
        git(&ws, &["init", "-q"]);
        let marker = t.path().join("PLANT-RAN");
        let bin = ws.join("bin");
        let path = format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display());
        let plant = format!(
            "mkdir bin; for n in git-sync git-remote-evil cargo-fmtx; do \
             printf '#!/bin/sh\\ntouch {}\\n' > bin/$n; chmod +x bin/$n; done; true",
            marker.display()
        );
        let o = run_command(&ws, &home, flags, &["sh", "-c", &plant])
            .env("PATH", &path)
            .output()
            .unwrap();
        assert_eq!(code(&o), 0, "{flags:?}: {}", err(&o));
        for args in [&["sync"][..], &["ls-remote", "evil::x"][..]] {
            let _ = Command::new("git")
                .arg("-C")
                .arg(&ws)
                .args(args)
                .env("PATH", &path)
                .env("HOME", &home)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .stdin(std::process::Stdio::null())
                .output()
                .unwrap();
        }
        assert!(
            !marker.exists(),
            "{flags:?}: the host's git ran a command the run planted on PATH: {}",
            err(&o)
        );
        for n in ["git-sync", "git-remote-evil", "cargo-fmtx"] {
            assert!(
                !bin.join(n).exists(),
                "{flags:?}: bin/{n} kept: {}",
                err(&o)
            );
        }
    }
}

/// mise reads `mise.<env>.toml` when the host's `MISE_ENV` names `<env>`,
/// and `.config/mise/config.toml`, `.config/mise.toml` and
/// `mise/config.toml` in any project directory: a run cannot leave new
/// ones (with hooks) there, nor rewrite an existing one, at the top or
/// below.
#[test]
fn mise_files_of_any_environment_cannot_be_planted() {
    for flags in LAYERS {
        let t = TempDir::new("h22d-mise");
        let home = t.dir("home");
        let ws = t.dir("ws");
        t.file("ws/mise.toml", "[tools]\n");
        t.file("ws/mise.staging.toml", "[tools]\n");
        t.file("ws/sub/keep.txt", "1\n");
        let hook = "[hooks]\nenter = \"touch /tmp/PWNED\"\n";
        let o = run_command(
            &ws,
            &home,
            flags,
            &[
                "sh",
                "-c",
                "for d in . sub; do mkdir -p $d/.config/mise $d/mise; \
                 printf '%s' \"$H\" > $d/mise.dev.toml; printf '%s' \"$H\" > $d/.mise.ci.local.toml; \
                 printf '%s' \"$H\" > $d/.config/mise/config.toml; printf '%s' \"$H\" > $d/.config/mise.toml; \
                 printf '%s' \"$H\" > $d/mise/config.toml; done; \
                 printf '%s' \"$H\" > mise.staging.toml; echo 2 > sub/keep.txt; true",
            ],
        )
        .env("H", hook)
        .output()
        .unwrap();
        assert_eq!(code(&o), 0, "{flags:?}: {}", err(&o));
        assert_eq!(
            std::fs::read_to_string(ws.join("mise.staging.toml")).unwrap(),
            "[tools]\n",
            "{flags:?}: an existing mise.<env>.toml was rewritten: {}",
            err(&o)
        );
        for d in [ws.clone(), ws.join("sub")] {
            for f in [
                "mise.dev.toml",
                ".mise.ci.local.toml",
                ".config/mise/config.toml",
                ".config/mise.toml",
                "mise/config.toml",
            ] {
                let p = d.join(f);
                let planted = std::fs::read_to_string(&p).is_ok_and(|s| s.contains("PWNED"));
                assert!(
                    !planted,
                    "{flags:?}: {} was left for host mise: {}",
                    p.display(),
                    err(&o)
                );
            }
        }
        // The rest of the project stays the run's.
        assert_eq!(
            std::fs::read_to_string(ws.join("sub/keep.txt")).unwrap(),
            "2\n",
            "{flags:?}: {}",
            err(&o)
        );
    }
}

/// A virtual environment `ws/.venv` made by host python, with a plain
/// `.pth` naming `ws/src` (what an editable install writes).
fn venv(ws: &Path) -> Option<PathBuf> {
    git(ws, &["init", "-q"]);
    let o = Command::new("python3")
        .args(["-m", "venv", "--without-pip"])
        .arg(ws.join(".venv"))
        .output()
        .ok()?;
    if !o.status.success() {
        return None;
    }
    let ver = std::fs::read_dir(ws.join(".venv/lib"))
        .ok()?
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("python"))?;
    let sp = ver.path().join("site-packages");
    std::fs::create_dir_all(&sp).ok()?;
    std::fs::create_dir_all(ws.join("src")).ok()?;
    std::fs::write(
        sp.join("__editable__.proj.pth"),
        format!("{}\n", ws.join("src").display()),
    )
    .ok()?;
    std::thread::sleep(std::time::Duration::from_millis(200));
    Some(sp)
}

/// An interpreter without `readline` (python's own is an extension module
/// in `lib-dynload`; builds without it exist) imports the first
/// `readline` on its path when started interactively: one a run leaves
/// in a directory a plain `.pth` line names (or in site-packages) is not
/// left for host python. Host python is started with `lib-dynload` left
/// out of its path, as such a build is.
#[test]
fn a_start_up_module_the_interpreter_lacks_is_not_left_on_its_path() {
    for flags in LAYERS {
        let t = TempDir::new("h22d-readline");
        let home = t.dir("home");
        let ws = t.dir("ws");
        let Some(sp) = venv(&ws) else {
            skarn_test_support::skip!("host python3 cannot make a virtual environment");
        };
        let marker = t.path().join("PLANT-RAN");
        let plant = format!("open({:?}, 'a').write('x')\n", marker.display().to_string());
        let script = format!(
            "printf '%s' \"$P\" > src/readline.py; printf '%s' \"$P\" > {}/readline.py; \
             mkdir -p src/apport_python_hook; printf '%s' \"$P\" > src/apport_python_hook/__init__.py; \
             echo ok > src/mod.py",
            sp.display()
        );
        let o = run_command(&ws, &home, flags, &["sh", "-c", &script])
            .env("P", &plant)
            .output()
            .unwrap();
        assert_eq!(code(&o), 0, "{flags:?}: {}", err(&o));
        let host = Command::new(ws.join(".venv/bin/python"))
            .args([
                "-c",
                "import sys; sys.path = [p for p in sys.path if 'lib-dynload' not in p]; \
                 sys.modules.pop('readline', None)\n\
                 try:\n  import readline\nexcept ImportError: pass\n\
                 try:\n  import apport_python_hook\nexcept ImportError: pass\n",
            ])
            .env_remove("PYTHONPATH")
            .output()
            .unwrap();
        assert!(
            host.status.success(),
            "{}",
            String::from_utf8_lossy(&host.stderr)
        );
        assert!(
            !marker.exists(),
            "{flags:?}: host python imported a start-up module the run planted: {}",
            err(&o)
        );
        assert_eq!(
            std::fs::read_to_string(ws.join("src/mod.py")).unwrap(),
            "ok\n",
            "{flags:?}: the rest of the source directory stays writable: {}",
            err(&o)
        );
    }
}

/// The system's schedulers and service managers run what they name on
/// their own: a cron entry in `/etc/cron.d` and a user unit in
/// `/etc/systemd/user` naming scripts in the workspace (as root, who alone
/// can write there): the run cannot rewrite the scripts. As any user, the
/// home's own user unit (`~/.config/systemd/user`) likewise, in a run of
/// its own (one mention makes the whole workspace read-only).
#[test]
fn scripts_system_schedulers_name_stay_unchanged() {
    let id = std::process::id();
    for flags in LAYERS {
        let mut cases: Vec<(&str, Vec<(String, String)>)> = vec![(
            "user.sh",
            vec![(
                "home/.config/systemd/user/h22d.service".to_string(),
                "[Service]\nExecStart={ws}/user.sh\n".to_string(),
            )],
        )];
        if skarn_test_support::is_root() {
            for (dir, file, text, name) in [
                (
                    "/etc/cron.d",
                    format!("skarn-h22d-{id}"),
                    "* * * * * root {ws}/job.sh\n",
                    "job.sh",
                ),
                (
                    "/etc/systemd/user",
                    format!("skarn-h22d-{id}.service"),
                    "[Service]\nExecStart=/bin/sh {ws}/svc.sh\n",
                    "svc.sh",
                ),
            ] {
                if Path::new(dir).is_dir() {
                    cases.push((name, vec![(format!("{dir}/{file}"), text.to_string())]));
                }
            }
        }
        for (name, files) in cases {
            let t = TempDir::new("h22d-cron");
            let home = t.dir("home");
            let ws = t.dir("ws");
            t.file(format!("ws/{name}"), "true\n");
            let mut made = Vec::new();
            for (f, text) in files {
                let text = text.replace("{ws}", &ws.display().to_string());
                if f.starts_with('/') {
                    std::fs::write(&f, text).unwrap();
                    made.push(RemoveOnDrop(PathBuf::from(f)));
                } else {
                    t.file(&f, text);
                }
            }
            let o = run_in(
                &ws,
                &home,
                flags,
                &[
                    "sh",
                    "-c",
                    &format!("echo 'touch /tmp/PWNED' > {name}; true"),
                ],
            );
            drop(made);
            // A workspace that is the directory of a script a system
            // launcher names is refused since atk22o F12 (`run_fy22b`);
            // either way the script is the host's.
            assert!(
                code(&o) == 0 || err(&o).contains("the installation of"),
                "{flags:?} {name}: {}",
                err(&o)
            );
            assert_eq!(
                std::fs::read_to_string(ws.join(name)).unwrap(),
                "true\n",
                "{flags:?}: {name}, named by a scheduler, was rewritten: {}",
                err(&o)
            );
        }
    }
}

/// A home configuration directory kept elsewhere (`~/.vim ->
/// ~/sync/vim`), or one of its entries (`~/.config/nvim ->
/// ~/sync/nvim`), holding links deep inside that lead into the workspace
/// (vim runs `pack/*/start/*/plugin/*.vim`): the run cannot rewrite what
/// they reach, also when the user trusts the workspace the home's
/// configuration names (that flag is about mentions, not links).
#[test]
fn links_deep_in_home_directories_kept_elsewhere_are_followed() {
    for flags in LAYERS {
        for trust in [false, true] {
            let t = TempDir::new("h22d-homelinks");
            let home = t.dir("home");
            let ws = t.dir("ws");
            let out = t.dir("sync");
            t.file("ws/x.vim", "\" fine\n");
            t.file("ws/y.lua", "-- fine\n");
            t.file("ws/other.txt", "1\n");
            let plugin = out.join("vim/pack/a/start/p/plugin");
            std::fs::create_dir_all(&plugin).unwrap();
            std::os::unix::fs::symlink(ws.join("x.vim"), plugin.join("x.vim")).unwrap();
            std::os::unix::fs::symlink(out.join("vim"), home.join(".vim")).unwrap();
            let deep = out.join("nvim/lua/user/plugins/deep");
            std::fs::create_dir_all(&deep).unwrap();
            std::os::unix::fs::symlink(ws.join("y.lua"), deep.join("x.lua")).unwrap();
            t.dir("home/.config");
            std::os::unix::fs::symlink(out.join("nvim"), home.join(".config/nvim")).unwrap();
            let mut f: Vec<&str> = flags.to_vec();
            if trust {
                f.push("--trust-home-config-workspace");
            }
            let o = run_in(
                &ws,
                &home,
                &f,
                &[
                    "sh",
                    "-c",
                    "echo 'silent !touch /tmp/PWNED' > x.vim; echo 'os.execute(\"touch /tmp/PWNED\")' > y.lua; \
                     echo 2 > other.txt; true",
                ],
            );
            assert_eq!(code(&o), 0, "{f:?}: {}", err(&o));
            assert_eq!(
                std::fs::read_to_string(ws.join("x.vim")).unwrap(),
                "\" fine\n",
                "{f:?}: a vim plugin linked from ~/.vim (kept elsewhere) was rewritten: {}",
                err(&o)
            );
            assert_eq!(
                std::fs::read_to_string(ws.join("y.lua")).unwrap(),
                "-- fine\n",
                "{f:?}: an nvim file linked from ~/.config/nvim (kept elsewhere) was rewritten: {}",
                err(&o)
            );
            if trust {
                assert_eq!(
                    std::fs::read_to_string(ws.join("other.txt")).unwrap(),
                    "2\n",
                    "{f:?}: the rest stays writable: {}",
                    err(&o)
                );
            }
        }
    }
}

/// Modules the import lines of a virtual environment's `.pth` files name
/// (virtualenv's `_virtualenv`, setuptools' editable finder, a package)
/// run at every start of its python: a run cannot rewrite them (atk22g
/// F9). Judged by the host's next `python -c pass` of the environment.
#[test]
fn modules_a_pth_imports_are_not_left_for_host_python() {
    for flags in LAYERS {
        let t = TempDir::new("h22d-pthimports");
        let home = t.dir("home");
        let ws = t.dir("ws");
        let Some(sp) = venv(&ws) else {
            skarn_test_support::skip!("host python3 cannot make a virtual environment");
        };
        std::fs::write(sp.join("_virtualenv.pth"), "import _virtualenv\n").unwrap();
        std::fs::write(sp.join("_virtualenv.py"), "# patches\n").unwrap();
        std::fs::write(
            sp.join("__editable__.app-1.0.pth"),
            "import __editable___app_1_0_finder; __editable___app_1_0_finder.install()\n",
        )
        .unwrap();
        std::fs::write(
            sp.join("__editable___app_1_0_finder.py"),
            "def install():\n    pass\n",
        )
        .unwrap();
        std::fs::create_dir_all(sp.join("hookpkg")).unwrap();
        std::fs::write(sp.join("hookpkg.pth"), "import hookpkg\n").unwrap();
        std::fs::write(sp.join("hookpkg/__init__.py"), "\n").unwrap();
        std::fs::write(sp.join("other.py"), "X = 1\n").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(200));
        let marker = t.path().join("PLANT-RAN");
        let m = marker.display().to_string();
        let script = format!(
            "cd {sp}; echo 'open(\"{m}\", \"a\")' >> _virtualenv.py; \
             printf 'def install():\\n    open(\"{m}\", \"a\")\\n' > __editable___app_1_0_finder.py; \
             echo 'open(\"{m}\", \"a\")' > hookpkg/__init__.py; echo 'X = 2' > other.py; true",
            sp = sp.display()
        );
        let o = run_in(&ws, &home, flags, &["sh", "-c", &script]);
        assert_eq!(code(&o), 0, "{flags:?}: {}", err(&o));
        let host = Command::new(ws.join(".venv/bin/python"))
            .args(["-c", "pass"])
            .env_remove("PYTHONPATH")
            .output()
            .unwrap();
        assert!(
            host.status.success(),
            "{}",
            String::from_utf8_lossy(&host.stderr)
        );
        assert!(
            !marker.exists(),
            "{flags:?}: host python ran a module a .pth imports, as the run left it: {}",
            err(&o)
        );
        assert_eq!(
            std::fs::read_to_string(sp.join("other.py")).unwrap(),
            "X = 2\n",
            "{flags:?}: other modules stay writable: {}",
            err(&o)
        );
    }
}

/// A workspace that is a virtual environment's `site-packages` or `lib`
/// (an agent given that `cwd`): a `.pth` with an import line and a
/// customize module the run leaves there are not left for the host's next
/// python of that environment (atk22g F2).
#[test]
fn a_workspace_inside_a_virtual_environment_keeps_its_start_up_files() {
    for flags in LAYERS {
        for at_lib in [false, true] {
            let t = TempDir::new("h22d-inenv");
            let home = t.dir("home");
            let env = t.path().join("venv");
            let ok = Command::new("python3")
                .args(["-m", "venv", "--without-pip"])
                .arg(&env)
                .output()
                .is_ok_and(|o| o.status.success());
            if !ok {
                skarn_test_support::skip!("host python3 cannot make a virtual environment");
            }
            let sp = std::fs::read_dir(env.join("lib"))
                .unwrap()
                .flatten()
                .find(|e| e.file_name().to_string_lossy().starts_with("python"))
                .unwrap()
                .path()
                .join("site-packages");
            std::fs::create_dir_all(&sp).unwrap();
            let ws = if at_lib { env.join("lib") } else { sp.clone() };
            let marker = t.path().join("PLANT-RAN");
            let m = marker.display().to_string();
            let script = format!(
                "cd {sp}; echo 'import os; open(\"{m}\", \"a\")' > zz.pth; \
                 echo 'open(\"{m}\", \"a\")' > sitecustomize.py; echo 'X = 1' > plain.py; true",
                sp = sp.display()
            );
            let o = run_in(
                &ws,
                &home,
                &[flags, &["--allow-non-project-workspace"][..]].concat(),
                &["sh", "-c", &script],
            );
            assert_eq!(code(&o), 0, "{flags:?} {}: {}", ws.display(), err(&o));
            let host = Command::new(env.join("bin/python"))
                .args(["-c", "pass"])
                .env_remove("PYTHONPATH")
                .output()
                .unwrap();
            assert!(
                host.status.success(),
                "{}",
                String::from_utf8_lossy(&host.stderr)
            );
            assert!(
                !marker.exists(),
                "{flags:?}: workspace {}: host python ran a start-up file the run left: {}",
                ws.display(),
                err(&o)
            );
            assert!(sp.join("plain.py").exists(), "{flags:?}: {}", err(&o));
        }
    }
}

/// Files tools read whether or not the project set them up: a new
/// `.yarnrc`/`.yarnrc.yml` naming a `yarn-path` the run wrote (a global
/// yarn runs it for any command), a new `mise.toml` or `.tool-versions`,
/// GitHub Copilot CLI's `.github/hooks/*.json`, and npm's and pnpm's
/// `.npmrc` (its `git` program) and `.pnpmfile.cjs` (atk22g F4, F5, F22):
/// none is left on the host after the run.
#[test]
fn files_global_tools_read_cannot_be_created() {
    for flags in LAYERS {
        let t = TempDir::new("h22d-yarnrc");
        let home = t.dir("home");
        let ws = t.dir("ws");
        git(&ws, &["init", "-q"]);
        t.file("ws/package.json", "{\"name\":\"p\"}\n");
        t.file("ws/.github/workflows/ci.yml", "on: push\n");
        let o = run_in(
            &ws,
            &home,
            flags,
            &[
                "sh",
                "-c",
                "mkdir -p scripts .github/hooks; echo 'require(\"fs\")' > scripts/y.js; \
                 echo 'yarn-path \"./scripts/y.js\"' > .yarnrc; echo 'yarnPath: ./scripts/y.js' > .yarnrc.yml; \
                 printf '[hooks]\\nenter = \"touch /tmp/PWNED\"\\n' > mise.toml; echo 'python path:./tc' > .tool-versions; \
                 echo '{\"hooks\":{\"sessionStart\":[{\"bash\":\"touch /tmp/PWNED\"}]}}' > .github/hooks/x.json; \
                 echo 'git=./scripts/y.js' > .npmrc; echo 'module.exports = {}' > .pnpmfile.cjs; true",
            ],
        );
        assert_eq!(code(&o), 0, "{flags:?}: {}", err(&o));
        for f in [
            ".yarnrc",
            ".yarnrc.yml",
            "mise.toml",
            ".tool-versions",
            ".github/hooks/x.json",
            ".npmrc",
            ".pnpmfile.cjs",
        ] {
            assert!(!ws.join(f).exists(), "{flags:?}: {f} was left: {}", err(&o));
        }
        assert!(ws.join("scripts/y.js").exists(), "{flags:?}: {}", err(&o));
        assert!(ws.join(".github/workflows/ci.yml").exists());
    }
}

/// Links in the home's other places lead into the workspace (atk22g F10,
/// F11, F13): an unlisted top-level dot directory (`~/.cpan/CPAN/
/// MyConfig.pm`, which cpan loads), a relocated `XDG_CONFIG_HOME`
/// (`<cfg>/fish/config.fish`) and the hooks directory the global git
/// configuration names (`~/.githooks/pre-commit`): the run cannot rewrite
/// what they reach. Checked from outside: the host's git commit in another
/// repository does not run the planted hook, the files keep their text.
#[test]
fn links_in_the_homes_other_places_are_followed() {
    if !host_has("git", "--version") {
        skarn_test_support::skip!("no git on the host");
    }
    for flags in LAYERS {
        let t = TempDir::new("h22d-otherdots");
        let home = t.dir("home");
        let ws = t.dir("ws");
        let cfg = t.dir("cfg");
        let marker = t.path().join("PLANT-RAN");
        t.file("ws/perl/MyConfig.pm", "1;\n");
        t.file("ws/fish/config.fish", "set -g x 1\n");
        t.file("ws/hooks/pre-commit", "#!/bin/sh\nexit 0\n");
        let mut p = std::fs::metadata(ws.join("hooks/pre-commit"))
            .unwrap()
            .permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut p, 0o755);
        std::fs::set_permissions(ws.join("hooks/pre-commit"), p).unwrap();
        for (link, target) in [
            (".cpan/CPAN/MyConfig.pm", "perl/MyConfig.pm"),
            (".githooks/pre-commit", "hooks/pre-commit"),
        ] {
            let l = home.join(link);
            std::fs::create_dir_all(l.parent().unwrap()).unwrap();
            std::os::unix::fs::symlink(ws.join(target), &l).unwrap();
        }
        t.dir("cfg/fish");
        std::os::unix::fs::symlink(ws.join("fish/config.fish"), cfg.join("fish/config.fish"))
            .unwrap();
        t.file(
            "home/.gitconfig",
            "[user]\n\tname = u\n\temail = u@x\n[core]\n\thooksPath = ~/.githooks\n",
        );
        let m = marker.display().to_string();
        let o = run_command(
            &ws,
            &home,
            &[flags, &["--trust-home-config-workspace"][..]].concat(),
            &[
                "sh",
                "-c",
                &format!(
                    "echo 'system(\"touch {m}\"); 1;' > perl/MyConfig.pm; \
                     echo 'touch {m}' >> fish/config.fish; \
                     printf '#!/bin/sh\\ntouch {m}\\n' > hooks/pre-commit; echo 1 > other.txt; true"
                ),
            ],
        )
        .env("XDG_CONFIG_HOME", &cfg)
        .output()
        .unwrap();
        assert_eq!(code(&o), 0, "{flags:?}: {}", err(&o));
        let repo = t.dir("repo");
        git(&repo, &["init", "-q"]);
        let _ = Command::new("git")
            .arg("-C")
            .arg(&repo)
            .args(["commit", "-q", "--allow-empty", "-m", "x"])
            .env("HOME", &home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap();
        assert!(
            !marker.exists(),
            "{flags:?}: the host's git ran the hook the run planted: {}",
            err(&o)
        );
        for (f, text) in [
            ("perl/MyConfig.pm", "1;\n"),
            ("fish/config.fish", "set -g x 1\n"),
        ] {
            assert_eq!(
                std::fs::read_to_string(ws.join(f)).unwrap(),
                text,
                "{flags:?}: {f}, reached from the home, was rewritten: {}",
                err(&o)
            );
        }
        assert!(ws.join("other.txt").exists(), "{flags:?}: {}", err(&o));
    }
}

/// Secret files named by `GIT_CONFIG_PARAMETERS` (the `-c` items a git
/// command passes on, in both its forms) and by a file the workspace
/// repository's own `config` includes: their values cannot be read inside.
#[test]
fn secret_files_git_config_parameters_and_repository_includes_name_are_hidden() {
    let t = TempDir::new("h22d-gitparams");
    let home = t.dir("home");
    let ws = t.dir("ws");
    git(&ws, &["init", "-q"]);
    t.file("ws/plain", "PLAIN-OK\n");
    t.file("ws/keys/new.key", "SECRET-P-NEW\n");
    t.file("ws/keys/old.key", "SECRET-P-OLD\n");
    t.file("ws/keys/inc.key", "SECRET-P-INC\n");
    t.file(
        "ws/.git/extra.cfg",
        format!("[http]\n\tsslKey = {}/keys/inc.key\n", ws.display()),
    );
    git(&ws, &["config", "include.path", "extra.cfg"]);
    let params = format!(
        "'http.https://a.test/.sslKey'='{w}/keys/new.key' 'http.proxySSLKey={w}/keys/old.key'",
        w = ws.display()
    );
    let o = run_command(
        &ws,
        &home,
        &[],
        &[
            "sh",
            "-c",
            "cat plain; cat keys/new.key; cat keys/old.key; cat keys/inc.key; true",
        ],
    )
    .env("GIT_CONFIG_PARAMETERS", &params)
    .output()
    .unwrap();
    let seen = format!("{}{}", out(&o), err(&o));
    assert!(seen.contains("PLAIN-OK"), "the command did not run: {seen}");
    for v in ["SECRET-P-NEW", "SECRET-P-OLD", "SECRET-P-INC"] {
        assert!(!seen.contains(v), "{v} readable inside: {seen}");
    }
}

/// A virtual environment's own tool configuration (`pip.conf`: its
/// `find-links` make the host's next `pip install` build a planted
/// package; Jupyter's kernel specs start their `argv`) cannot be planted
/// by a run (atk22g F24).
#[test]
fn a_virtual_environments_tool_configuration_cannot_be_planted() {
    for flags in LAYERS {
        let t = TempDir::new("h22d-pipconf");
        let home = t.dir("home");
        let ws = t.dir("ws");
        if venv(&ws).is_none() {
            skarn_test_support::skip!("host python3 cannot make a virtual environment");
        }
        let o = run_in(
            &ws,
            &home,
            flags,
            &[
                "sh",
                "-c",
                "printf '[global]\\nfind-links = ./pkgs\\nno-index = true\\n' > .venv/pip.conf; \
                 mkdir -p .venv/share/jupyter/kernels/x; echo '{\"argv\":[\"sh\"]}' > .venv/share/jupyter/kernels/x/kernel.json; \
                 echo ok > src/mod.py; true",
            ],
        );
        assert_eq!(code(&o), 0, "{flags:?}: {}", err(&o));
        for f in [
            ".venv/pip.conf",
            ".venv/share/jupyter/kernels/x/kernel.json",
        ] {
            assert!(!ws.join(f).exists(), "{flags:?}: {f} was left: {}", err(&o));
        }
        assert!(ws.join("src/mod.py").exists(), "{flags:?}: {}", err(&o));
    }
}

/// The programs the workspace repository's own configuration names by a
/// path in the work tree (`core.fsmonitor = tools/fs.sh`, a `!` alias, a
/// filter) are kept: the host's next `git status` does not run what the
/// run wrote there (atk22g F20).
#[test]
fn programs_the_repositorys_own_configuration_names_cannot_be_rewritten() {
    if !host_has("git", "--version") {
        skarn_test_support::skip!("no git on the host");
    }
    for flags in LAYERS {
        let t = TempDir::new("h22d-fsmon");
        let home = t.dir("home");
        let ws = t.dir("ws");
        git(&ws, &["init", "-q"]);
        git(&ws, &["config", "core.fsmonitor", "tools/fs.sh"]);
        git(&ws, &["config", "alias.fmt", "!tools/fmt.sh"]);
        git(&ws, &["config", "filter.x.clean", "tools/clean.sh %f"]);
        for f in ["tools/fs.sh", "tools/fmt.sh", "tools/clean.sh"] {
            t.file(format!("ws/{f}"), "#!/bin/sh\nexit 0\n");
            let mut p = std::fs::metadata(ws.join(f)).unwrap().permissions();
            std::os::unix::fs::PermissionsExt::set_mode(&mut p, 0o755);
            std::fs::set_permissions(ws.join(f), p).unwrap();
        }
        let marker = t.path().join("PLANT-RAN");
        let o = run_in(
            &ws,
            &home,
            flags,
            &[
                "sh",
                "-c",
                &format!(
                    "for f in tools/fs.sh tools/fmt.sh tools/clean.sh; do \
                     printf '#!/bin/sh\\ntouch {}\\n' > $f; done; echo 1 > other.txt; true",
                    marker.display()
                ),
            ],
        );
        assert_eq!(code(&o), 0, "{flags:?}: {}", err(&o));
        let _ = Command::new("git")
            .arg("-C")
            .arg(&ws)
            .args(["status"])
            .env("HOME", &home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap();
        assert!(
            !marker.exists(),
            "{flags:?}: the host's git status ran the fsmonitor program the run rewrote: {}",
            err(&o)
        );
        for f in ["tools/fmt.sh", "tools/clean.sh"] {
            assert_eq!(
                std::fs::read_to_string(ws.join(f)).unwrap(),
                "#!/bin/sh\nexit 0\n",
                "{flags:?}: {f} was rewritten: {}",
                err(&o)
            );
        }
        assert!(ws.join("other.txt").exists(), "{flags:?}: {}", err(&o));
    }
}
