use super::*;

const VALUE: &str = "cio-REAL-Abc123Def456Ghi789";
/// As long as the value, as real placeholders are.
const PH: &str = "PLACEHOLDER-xyzw09876543210";

fn secrets() -> RunSecrets {
    RunSecrets::for_tests(VALUE, Some(PH), "reg.test")
}

fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s)
}

#[test]
fn cargo_tokens_that_are_the_value_get_the_placeholder_and_nothing_else_is_copied() {
    let dir = skarn_test_support::TempDir::new("tool-cred-cargo");
    let ch = dir.path();
    std::fs::write(
        ch.join("credentials.toml"),
        format!(
            "[registry]\ntoken = \"{VALUE}\"\n\n[registries.my-reg]\ntoken = \"{VALUE}\"\n\n\
             [registries.other]\ntoken = \"ungranted-OTHER-secret-123456\"\n"
        ),
    )
    .unwrap();
    let c = secrets().cargo_tokens(ch);
    let back: toml::Table = c.file.parse().unwrap();
    assert_eq!(back["registry"]["token"].as_str(), Some(PH));
    assert_eq!(back["registries"]["my-reg"]["token"].as_str(), Some(PH));
    assert!(back["registries"].get("other").is_none(), "{}", c.file);
    assert!(!c.file.contains("OTHER") && !c.file.contains(VALUE));
    assert_eq!(
        c.vars,
        vec![
            ("CARGO_REGISTRY_TOKEN".to_string(), PH.to_string()),
            ("CARGO_REGISTRIES_MY_REG_TOKEN".to_string(), PH.to_string()),
        ]
    );
}

#[test]
fn cargo_without_the_value_or_with_a_broken_file_gives_nothing() {
    let dir = skarn_test_support::TempDir::new("tool-cred-cargo2");
    let ch = dir.path();
    assert_eq!(secrets().cargo_tokens(ch), CargoTokens::default());
    std::fs::write(ch.join("credentials"), "[registry\ntoken = 1").unwrap();
    assert_eq!(secrets().cargo_tokens(ch), CargoTokens::default());
    std::fs::write(ch.join("credentials"), "[registry]\ntoken = \"other\"\n").unwrap();
    assert_eq!(secrets().cargo_tokens(ch), CargoTokens::default());
    // The older name is read too.
    std::fs::write(
        ch.join("credentials"),
        format!("[registry]\ntoken = \"{VALUE}\"\n"),
    )
    .unwrap();
    assert_eq!(secrets().cargo_tokens(ch).vars.len(), 1);
}

#[test]
fn git_extra_headers_get_the_placeholder_in_bearer_and_basic_forms() {
    let dir = skarn_test_support::TempDir::new("tool-cred-git");
    let home = dir.path();
    std::fs::write(
        home.join(".gitconfig"),
        format!(
            "[user]\n\tname = me\n[http \"https://git.test/\"]\n\textraHeader = Authorization: Bearer {VALUE}\n\
             [http \"https://other.test/\"]\n\textraheader = AUTHORIZATION: basic {}\n\
             [http]\n\textraheader = X-Other: ungranted-OTHER-123\n\
             [url \"https://me:{VALUE}@git.test/\"]\n\tinsteadOf = https://git.test/\n",
            b64(&format!("x-access-token:{VALUE}"))
        ),
    )
    .unwrap();
    let out = secrets().git_settings(home);
    let items = gitconfig::parse(&out).items;
    let get = |sub: &str| {
        items
            .iter()
            .find(|i| i.sub.as_deref() == Some(sub))
            .and_then(|i| i.value.clone())
    };
    assert_eq!(
        get("https://git.test/").as_deref(),
        Some(&*format!("Authorization: Bearer {PH}"))
    );
    assert_eq!(
        get("https://other.test/").as_deref(),
        Some(&*format!(
            "AUTHORIZATION: basic {}",
            b64(&format!("x-access-token:{PH}"))
        ))
    );
    assert_eq!(
        get(&format!("https://me:{PH}@git.test/")).as_deref(),
        Some("https://git.test/")
    );
    assert!(
        !out.contains("OTHER") && !out.contains(VALUE) && !out.contains("name"),
        "{out}"
    );
}

#[test]
fn swap_values_refuses_a_value_left_in_another_form() {
    let s = secrets();
    assert_eq!(s.swap_values("nothing here"), None);
    let rev: String = VALUE.chars().rev().collect();
    assert_eq!(s.swap_values(&format!("a {VALUE} b {rev}")), None);
    assert_eq!(
        s.swap_values(&format!("Bearer {VALUE}")).as_deref(),
        Some(&*format!("Bearer {PH}"))
    );
}

#[test]
fn git_settings_that_keep_another_credential_are_not_copied() {
    // atk27g F11: the copy kept a URL password, a query-string secret and
    // an `insteadOf` password of the same entry.
    let dir = skarn_test_support::TempDir::new("tool-cred-git-other");
    let home = dir.path();
    std::fs::write(
        home.join(".gitconfig"),
        format!(
            "[url \"https://{VALUE}:OTHERpass1@a.test/\"]\n\tinsteadOf = https://a.test/\n\
             [url \"https://me:{VALUE}@b.test/?sig=OTHERsig\"]\n\tinsteadOf = https://b.test/\n\
             [url \"https://me:{VALUE}@c.test/\"]\n\tinsteadOf = https://u:OTHERpw@c.test/\n\
             [http \"https://u:OTHERsub@d.test/\"]\n\textraHeader = Authorization: Bearer {VALUE}\n\
             [http \"https://e.test/\"]\n\textraHeader = Authorization: Basic {}\n\
             [url \"https://me:{VALUE}@ok.test/\"]\n\tinsteadOf = https://ok.test/\n",
            b64(&format!("{VALUE}:OTHERb64"))
        ),
    )
    .unwrap();
    let out = secrets().git_settings(home);
    assert!(!out.contains("OTHER"), "{out}");
    assert!(out.contains(&format!("https://me:{PH}@ok.test/")), "{out}");
}
