//! Text without `core::fmt`: the library builds its messages with these
//! instead of `format!`. A `format!` site costs its own argument building in
//! the wasm, and `core::fmt` itself (its formatter and the `Display` of the
//! integers) stays out of the module only while no site is left.

use crate::prelude::*;

/// `template` with each `{}` replaced by the next of `args`, in order.
/// (A message that shows a literal `{}` passes it as an argument.)
pub fn fill(template: &str, args: &[&str]) -> String {
    let bytes = template.as_bytes();
    let mut text = String::new();
    let mut args = args.iter();
    let (mut start, mut at) = (0, 0);
    while at + 1 < bytes.len() {
        if bytes.get(at) == Some(&b'{') && bytes.get(at + 1) == Some(&b'}') {
            text.push_str(template.get(start..at).unwrap_or_default());
            text.push_str(args.next().copied().unwrap_or_default());
            at += 2;
            start = at;
        } else {
            at += 1;
        }
    }
    text.push_str(template.get(start..).unwrap_or_default());
    text
}

/// `n` in decimal (the JSON writer's integer formatting, no `core::fmt`).
pub fn decimal(n: u64) -> String {
    let mut text = String::new();
    crate::json::push_u64(&mut text, n);
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_replaces_placeholders_in_order() {
        assert_eq!(fill("", &[]), "");
        assert_eq!(fill("plain", &[]), "plain");
        assert_eq!(fill("{}", &["x"]), "x");
        assert_eq!(fill("a {} b {}!", &["1", "2"]), format!("a {} b {}!", 1, 2));
        assert_eq!(fill("{}{}", &["é", "日"]), "é日");
        // Arguments are not scanned again; a literal `{}` is an argument.
        assert_eq!(fill("[{}] shows {}", &["{}", "{}"]), "[{}] shows {}");
        assert_eq!(fill("{1,128}$ {", &[]), "{1,128}$ {");
        assert_eq!(decimal(0), "0");
        assert_eq!(decimal(u64::MAX), u64::MAX.to_string());
    }
}
