//! What of a granted secret could reach a `skarn run` command besides the
//! placeholder (attack atk27 F6, F7, F9): the value encoded in the
//! caller's variables (base64 in a `Basic` header, hex, percent-encoded),
//! an ungranted credential on the same dotfile line as a granted one, the
//! secret's own source file under a grant. Checked on what the command
//! printed and on skarn's stderr.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

use crate::common::*;
use skarn_test_support::TempDir;

const REAL: &str = "tok-REAL-value-0123456789abcdef";
const WS_REAL: &str = "ws-REAL-value-abcdefghij0123456";
const UNGRANTED: &str = "OtherPass-ungranted-77";
const UNGRANTED_NPM: &str = "OTHERpw-not-granted-999";

#[test]
fn encoded_copies_ungranted_neighbours_and_source_files_stay_out() {
    let t = TempDir::new("sec-forms");
    let home = t.dir("home");
    let vals = t.dir("vals");
    let ws = t.dir("ws");
    std::fs::create_dir_all(ws.join(".secrets")).unwrap();
    std::fs::write(vals.join("tok"), format!("{REAL}\n")).unwrap();
    std::fs::write(ws.join(".secrets/tok.txt"), WS_REAL).unwrap();
    std::fs::create_dir_all(home.join(".config/skarn")).unwrap();
    std::fs::write(
        home.join(".config/skarn/config.toml"),
        format!(
            "[secrets.tok]\nfile = \"{}\"\nhosts = [\"localhost:4443\"]\nenv = \"TOKEN\"\n\n\
             [secrets.wstok]\nfile = \"{}\"\nhosts = [\"localhost:4443\"]\n",
            vals.join("tok").display(),
            ws.join(".secrets/tok.txt").display()
        ),
    )
    .unwrap();
    std::fs::write(
        home.join(".npmrc"),
        // The second line holds another, ungranted credential after the
        // granted one: not copied in at all.
        format!(
            "//localhost:4443/:_authToken={REAL}\n\
             //other.test/:_authToken={REAL} //x/:_password={UNGRANTED_NPM}\n"
        ),
    )
    .unwrap();
    std::fs::create_dir_all(home.join(".config/pip")).unwrap();
    std::fs::write(
        home.join(".config/pip/pip.conf"),
        format!(
            "[global]\nextra-index-url = https://me:{REAL}@localhost:4443/simple \
             https://bob:{UNGRANTED}@other.example/simple\n"
        ),
    )
    .unwrap();
    let basic = STANDARD.encode(format!("x-access-token:{REAL}"));
    let hex: String = REAL.bytes().map(|b| format!("{b:02x}")).collect();
    let pct: String = REAL.bytes().map(|b| format!("%{b:02X}")).collect();
    let script = format!(
        "env; cat ~/.npmrc; echo \"pip=$PIP_EXTRA_INDEX_URL\"; echo \"token-var=$TOKEN\"; \
         cat {} .secrets/tok.txt 2>&1; true",
        vals.join("tok").display()
    );
    let read = vals.display().to_string();
    let mut c = run_command(
        &ws,
        &home,
        &["--secret", "tok", "--secret", "wstok", "--read", &read],
        &["sh", "-c", &script],
    );
    c.env("GIT_CONFIG_COUNT", "1")
        .env("GIT_CONFIG_KEY_0", "http.extraheader")
        .env(
            "GIT_CONFIG_VALUE_0",
            format!("AUTHORIZATION: basic {basic}"),
        )
        .env("MYAPP_URL", format!("https://api.example/?k={pct}"))
        .env("HEXV", &hex);
    let o = c.output().unwrap();
    let (stdout, stderr) = (out(&o), err(&o));
    assert_eq!(code(&o), 0, "{stderr}");
    for bad in [REAL, WS_REAL, &basic, &hex, &pct, UNGRANTED, UNGRANTED_NPM] {
        assert!(!stdout.contains(bad), "{bad} inside:\n{stdout}");
        assert!(!stderr.contains(bad), "{bad} in stderr");
    }
    assert!(!stdout.contains("GIT_CONFIG_VALUE_0") && !stdout.contains("HEXV="));
    // The granted settings still work, with the placeholder only.
    let ph = stdout
        .lines()
        .find_map(|l| l.strip_prefix("token-var="))
        .unwrap();
    assert!(
        stdout.contains(&format!("//localhost:4443/:_authToken={ph}\n")),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "pip=https://me:{ph}@localhost:4443/simple https://other.example/simple\n"
        )),
        "{stdout}"
    );
}
