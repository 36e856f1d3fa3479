//! What the tests expect, written out from the plan independently of the code that does it: the
//! guest's unit tests and the end-to-end tests (`tests/e2e/common` includes this file) judge by
//! the same oracle.

/// The answer `read_image` owes for a reply `text` (with `note` at its end when the reply did not
/// end): within 200,000 characters whole, else the first 100,000 characters, a marker that states
/// the count cut, and as many last characters as fill 200,000 exactly.
pub fn expected_cut(text: &str, note: &str) -> String {
    let n = text.chars().count();
    let budget = 200_000 - note.chars().count();
    if n <= budget {
        return format!("{text}{note}");
    }
    let marker = |cut: usize| format!("\n\n[… {cut} characters cut from the middle by mediagate …]\n\n");
    let cut = (n - budget..).find(|&cut| cut == n - budget + marker(cut).chars().count()).unwrap();
    let head: String = text.chars().take(100_000).collect();
    let tail: String = text.chars().skip(100_000 + cut).collect();
    format!("{head}{}{tail}{note}", marker(cut))
}
