use super::*;

#[test]
fn sizes() {
    use SizeUnit::*;
    assert_eq!(parse_size("512", MiB), Ok(512 * MIB));
    assert_eq!(parse_size("512", Bytes), Ok(512));
    assert_eq!(parse_size("512M", Bytes), Ok(512 * MIB));
    assert_eq!(parse_size("512MB", Bytes), Ok(512 * MIB));
    assert_eq!(parse_size("512 MiB", Bytes), Ok(512 * MIB));
    assert_eq!(parse_size("64k", MiB), Ok(64 << 10));
    assert_eq!(parse_size("64KiB", MiB), Ok(64 << 10));
    assert_eq!(parse_size("1.5G", MiB), Ok(1536 * MIB));
    assert_eq!(parse_size("2T", MiB), Ok(2 << 40));
    assert_eq!(parse_size("100B", MiB), Ok(100));
    assert_eq!(parse_size("0", MiB), Ok(0));
    for bad in ["", "lots", "-1M", "1X", "M", ".", "1.2.3M", "1e3"] {
        assert!(parse_size(bad, MiB).is_err(), "{bad}");
    }
    assert!(matches!(
        parse_size("99999999G", MiB),
        Err(UnitError::OutOfRange(..))
    ));
    let e = parse_size("lots", MiB).unwrap_err().to_string();
    assert!(e.contains("bare number means MiB"), "{e}");
}

#[test]
fn durations() {
    use DurationUnit::*;
    assert_eq!(parse_duration("30", Secs), Ok(Duration::from_secs(30)));
    assert_eq!(parse_duration("30s", Secs), Ok(Duration::from_secs(30)));
    assert_eq!(
        parse_duration("500ms", Secs),
        Ok(Duration::from_millis(500))
    );
    assert_eq!(parse_duration("2m", Secs), Ok(Duration::from_secs(120)));
    assert_eq!(parse_duration("1h", Secs), Ok(Duration::from_secs(3600)));
    assert_eq!(
        parse_duration("1.5s", Secs),
        Ok(Duration::from_millis(1500))
    );
    assert_eq!(
        parse_duration("250", Millis),
        Ok(Duration::from_millis(250))
    );
    assert_eq!(
        parse_duration("7d", Secs),
        Ok(Duration::from_secs(7 * 86_400))
    );
    for bad in ["", "soon", "-1s", "1w", "s"] {
        assert!(parse_duration(bad, Secs).is_err(), "{bad}");
    }
    assert!(parse_duration("31d", Secs).is_err());
    assert!(parse_duration("1000h", Secs).is_err());
}

#[test]
fn whole_units() {
    assert_eq!(parse_size_mib("2G"), Ok(2048));
    assert_eq!(parse_size_mib("512"), Ok(512));
    assert!(matches!(
        parse_size_mib("100K"),
        Err(UnitError::NotWhole(..))
    ));
    assert_eq!(parse_duration_secs("2m"), Ok(120));
    assert!(matches!(
        parse_duration_secs("500ms"),
        Err(UnitError::NotWhole(..))
    ));
}

#[test]
fn config_values() {
    #[derive(serde::Deserialize)]
    struct T {
        a: Value,
        b: Value,
        c: Value,
        #[serde(deserialize_with = "secs_f64")]
        d: f64,
    }
    let t: T = toml::from_str("a = 512\nb = \"512M\"\nc = 1.5\nd = \"250ms\"\n").unwrap();
    assert_eq!(t.a.size(SizeUnit::MiB), Ok(512 * MIB));
    assert_eq!(t.b.size(SizeUnit::MiB), Ok(512 * MIB));
    assert!(t.a.is_bare() && !t.b.is_bare() && t.c.is_bare());
    assert_eq!(
        t.c.duration(DurationUnit::Secs),
        Ok(Duration::from_millis(1500))
    );
    assert_eq!(t.d, 0.25);
    let e = toml::from_str::<T>("a = 1\nb = 1\nc = 1\nd = \"soon\"\n")
        .err()
        .unwrap();
    assert!(e.to_string().contains("invalid duration"), "{e}");
}
