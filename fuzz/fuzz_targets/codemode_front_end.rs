//! The Code Mode front end (oxc parse, validator, TypeScript strip) on
//! any script: never panics or overflows, and whatever it accepts it
//! accepts again when handed its own output (the engine runs that
//! output, so the validator must see in it what it saw in the script).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(code) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(js) = skarn_codemode::front_end_for_testing(code) {
        if let Err(e) = skarn_codemode::front_end_for_testing(&js) {
            panic!("accepted script re-emitted as {js:?} is refused: {e:?}");
        }
    }
});
