use super::path::random_looking;
use super::url_names_credential;

#[test]
fn credentials_in_a_urls_path_are_found_by_their_shape() {
    for w in [
        "https://hooks.example/services/T0123ABCD/B0456EFGH/abcdefghijklmnopqrstuvwx",
        "https://hooks.example/services/T0123ABCD/B0456EFGH/X7hGq2LmP9sKd3RtW8vYb1Nc",
        "https://chat.example/api/webhooks/123456789012345678/AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
        "https://api.example/bot123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11/sendMessage",
        "https://conda.example/t/ab-12345678-1234-1234-1234-123456789abc/acme",
        "https://git.example/api/v4/projects/1/glpat-abcdefghijklmnopqrst/x",
        "https://raw.example/ghp_abcdefghijklmnopqrstuvwxyz0123/file",
        "https://ping.example/4f3a1b2c-9d8e-4f7a-b6c5-d4e3f2a1b0c9",
    ] {
        assert!(url_names_credential(w), "{w}");
    }
    for w in [
        "https://api.example/v1/organizations/members",
        "https://dl.example/releases/download/v1.2.3/tool_1.2.3_linux_amd64.tar.gz",
        "https://static.example/dist/x86_64-unknown-linux-gnu/aarch64-apple-darwin",
        "https://forum.example/t/how-to-configure-the-python-dateutil/1234",
        "https://pkgs.example/simple/python-dateutil-extras/",
        "https://api.example/v1/getUserProfileSettings",
        "https://dl.example/ubuntu-22-04-x86_64-server/nightly-2024-05-01",
        "/not/a/url/X7hGq2LmP9sKd3RtW8vYb1Nc",
        "https://example.test",
    ] {
        assert!(!url_names_credential(w), "{w}");
    }
    assert!(!random_looking("SomeVeryLongClassName"));
    assert!(!random_looking("my-awesome-project-2024"));
}

/// atk27q F4: the same credential URL wrapped or followed by punctuation,
/// without its scheme, or with the token in its fragment.
#[test]
fn credential_urls_inside_text_are_found() {
    let u = "https://hooks.example.test/services/T0AB12CD3/B0EF45GH6/Zq8Lm3Xp0Tv5Wn9Rc4Yb7Hs2";
    let bare = u.trim_start_matches("https://");
    for w in [
        format!("<{u}>"),
        format!("({u})"),
        format!("{u};v=1"),
        format!("{u}|https://x"),
        format!("{u}.json"),
        format!("{{url:{u}}}"),
        bare.to_string(),
        format!("url:{bare}"),
        format!("hook={bare}"),
        format!("[link]({u})"),
        "https://app.example.test/callback#access_token=Zq8Lm3Xp0Tv5&token_type=bearer".into(),
        "https://app.example.test/cb?state=1#id_token=abc".into(),
    ] {
        assert!(url_names_credential(&w), "{w}");
    }
    for w in [
        "see <https://docs.example.test/guide/install.html> (section 2)",
        "https://docs.example.test/guide#installing-the-tool",
        "dist/index.html",
        "./build/out.js",
        "../x/y",
        "node_modules/.bin/tsc",
        "v1.2.3/notes",
        "https://dl.example.test/releases/download/v1.2.3/tool_1.2.3_linux_amd64.tar.gz",
        "https://static.example.test/dist/app.min.js?v=3",
    ] {
        assert!(!url_names_credential(w), "{w}");
    }
}
