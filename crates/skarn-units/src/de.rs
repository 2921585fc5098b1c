//! serde helpers: `#[serde(deserialize_with = "skarn_units::secs_f64")]`
//! turns `30`, `1.5`, `"30s"` or `"500ms"` into seconds as `f64`.

use serde::{Deserialize, Deserializer, de::Error};

use crate::{DurationUnit, Value};

/// A duration (bare number = seconds) as fractional seconds.
pub fn secs_f64<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    let v = Value::deserialize(d)?;
    v.duration(DurationUnit::Secs)
        .map(|d| d.as_secs_f64())
        .map_err(D::Error::custom)
}

/// Like [`secs_f64`], for an optional key.
pub fn opt_secs_f64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    secs_f64(d).map(Some)
}
