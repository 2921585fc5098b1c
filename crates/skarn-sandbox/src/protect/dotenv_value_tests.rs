use super::*;
use crate::protect::dotenv::code_variable;

fn judged(text: &str) -> Option<String> {
    code_variable(text.as_bytes()).map(|(_, n)| n)
}

#[test]
fn what_host_programs_run_or_send_traffic_by_is_refused_whatever_its_name() {
    // atk22i F2: none of these names is on a list.
    for text in [
        "DEBUG=1\nPYENV_HOOK_PATH=/w/scripts/pyhooks\n",
        "RBENV_HOOK_PATH=hooks\n",
        "ASDF_DATA_DIR=/w/asdf\n",
        "RSYNC_RSH=sh\n",
        "CVS_RSH=ssh\n",
        "NIX_PATH=nixpkgs=/w/np\n",
        "DENO_DIR=cache\n",
        "NUGET_PACKAGES=pkgs\n",
        "HTTPS_PROXY=http://127.0.0.1:8080\n",
        "https_proxy=evil.example:3128\n",
        "ALL_PROXY=socks5h://evil.example\n",
        "SSL_CERT_FILE=ca.pem\n",
        "REQUESTS_CA_BUNDLE=/w/ca.pem\n",
        "NODE_EXTRA_CA_CERTS=ca.pem\n",
        "NODE_TLS_REJECT_UNAUTHORIZED=0\n",
        "OPENAI_BASE_URL=https://evil.example/v1\n",
        "OPENAI_API_BASE=https://evil.example/v1\n",
        "ANTHROPIC_BASE_URL=https://evil.example\n",
        "CODE_ASSIST_ENDPOINT=https://evil.example\n",
        "GOOGLE_GEMINI_BASE_URL=https://evil.example\n",
        "GEMINI_SYSTEM_MD=/w/prompt.md\n",
        "GEMINI_SYSTEM_MD=prompt.md\n",
        "SOME_TOOL_X=./run.sh\n",
        "SOME_TOOL_X=\"python3 evil.py\"\n",
        "SOME_TOOL_X=`touch x`\n",
        "SOME_TOOL_X=$(touch x)\n",
        "A=1;touch x\n",
        "A=1 FOO_PROXY=evil\n",
        "A=1 B=/w/x\n",
        "OLLAMA_HOST=evil.example:11434\n",
        "X=\"a\n/w/x\"\n",
        "X=a\u{2028}/w/x\n",
        "export  SSLKEYLOGFILE=k\n",
        "X=${HOME:-/w/x}\n",
    ] {
        assert!(judged(text).is_some(), "{text:?} passed");
    }
}

#[test]
fn an_applications_data_stays() {
    for text in [
        "PORT=3000\nSECRET_KEY=abc\nNODE_ENV=development\nLOG_LEVEL=debug\n",
        "DATABASE_URL=postgres://u:p@db.example:5432/app\n",
        "REDIS_URL=redis://localhost:6379/0\n",
        "APP_URL=http://localhost:8000\nNEXT_PUBLIC_API_URL=http://127.0.0.1:3000/api\n",
        "APP_NAME=\"My App\"\n",
        "APP_KEY=base64:Sx8qP0kH1mZt3Q2wEr4TyU5iO6pA7sD8fG9hJ0kL/Mn=\n",
        "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
        "MAIL_FROM_ADDRESS=\"hello@example.com\"\n",
        "VERSION=1.2.3\nEMPTY=\nUPLOAD_PATH=\n",
        "DB_HOST=127.0.0.1\nREDIS_HOST=redis\nREDIS_ADDR=redis:6379\n",
        "VITE_APP_NAME=\"${APP_NAME}\"\nURL=postgres://${DB_USER}:${DB_PASS}@localhost/db\n",
        "# Get a key at https://example.com/keys\nOPENAI_API_KEY=sk-abc123 # the key\n",
        "PRIVATE_KEY=\"-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n-----END PRIVATE KEY-----\"\n",
        "CORS_ORIGIN=*\nFEATURE_X=true\nTIME=10:30\n",
    ] {
        assert_eq!(judged(text), None, "{text:?}");
    }
}

#[test]
fn names_are_judged_by_their_shape() {
    assert!(name_steers("PYENV_HOOK_PATH").is_some());
    assert!(name_steers("https_proxy").is_some());
    assert!(name_steers("CA_BUNDLE").is_some());
    assert!(name_steers("PORT").is_none());
    assert!(name_steers("DATABASE_URL").is_none());
    assert!(name_steers("OPENAI_API_KEY").is_none());
}

#[test]
fn names_of_imported_modules_steer_with_any_value() {
    // atk22k F2b.
    for (n, v) in [
        ("_PYTHON_SYSCONFIGDATA_NAME", "evil"),
        ("FLASK_APP", "app:create_app"),
        ("WSGI_APPLICATION", "site"),
        ("MYAPP_SETTINGS", "conf"),
        ("PYTHONUSERBASE", "venv"),
        ("PYTHON_HISTORY", "h"),
    ] {
        assert!(module_name_steers(n, v).is_some(), "{n}={v}");
    }
    for (n, v) in [
        ("PYTHONUNBUFFERED", "1"),
        ("PYTHONDONTWRITEBYTECODE", "true"),
        ("PYTHONHASHSEED", "random"),
        ("PYTHONIOENCODING", "utf-8"),
        ("FLASK_APP", ""),
        ("APP_NAME", "demo"),
        ("NODE_ENV", "production"),
    ] {
        assert_eq!(module_name_steers(n, v), None, "{n}={v}");
    }
}

#[test]
fn a_bare_word_naming_a_module_beside_the_file_steers() {
    let t = skarn_test_support::TempDir::new("dotenv-module");
    t.file("evil.py", "");
    t.file("native.cpython-312-x86_64-linux-gnu.so", "");
    t.file("debug.log", "");
    let d = t.path();
    for v in ["evil", "evil:main", "evil.sub", "native"] {
        assert!(names_an_entry(v, d).is_some(), "{v}");
    }
    for v in ["debug", "production", "1"] {
        assert_eq!(names_an_entry(v, d), None, "{v}");
    }
}
