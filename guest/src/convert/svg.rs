//! SVG → pixels, in the sandbox: usvg parses (from a document we parsed first, with limits), resvg
//! renders with tiny-skia. Nothing outside the bytes is ever read: no file, no URL, no system font.
//!
//! - External references: `<image href="file.png">`, `href="https://…"` are not drawn (the image
//!   resolver's string case answers nothing, and there is no resources directory); `<use
//!   href="other.svg#x">` is never followed (usvg follows local `#id` links only); CSS `@import` is
//!   not loaded (usvg's CSS reader ignores it). Only `data:` URLs of PNG, JPEG, GIF or WebP are
//!   drawn, recognised by their magic bytes (not by the URL's claimed type), each within
//!   [`MAX_EMBEDDED_SIDE`] / [`MAX_EMBEDDED_PIXELS`] read from its header before resvg decodes it; an
//!   embedded raster over those, or one that does not decode, refuses the whole SVG (fail closed: a
//!   picture with a hole is not what the author drew). A `data:` SVG inside the SVG is not drawn.
//! - Text: drawn with the one font the component carries (`guest/fonts/`, DejaVu Sans, subset);
//!   every family, generic or named, maps to it.
//! - Size: fitted into `max_side`², aspect kept; a vector has no native pixels, so a small one (a
//!   16×16 icon) is scaled up until its longer side is [`MIN_LONG_SIDE`] (or `max_side` if smaller):
//!   a 16-pixel icon is useless to a vision model. An SVG without any size is usvg's 100×100.
//! - Bounds (hostile input ends in a refusal, not a hang, a trap or an out-of-memory): the text is
//!   at most [`MAX_SVG_BYTES`], parsed with at most [`MAX_XML_NODES`] nodes (entity expansion
//!   counted); before usvg expands `<use>` and markers, their expansion is counted on the parsed
//!   document ([`MAX_EXPANDED_ELEMENTS`], [`MAX_EXPANDED_TEXT_CHARS`], CSS rules × elements); after
//!   it, the usvg tree is walked and the render's cost estimated at the output scale: nodes, path
//!   segments, dashes, and pixels — the pixel operations of fills, layers, masks, filter primitives
//!   (a morphology's radius, a convolution's kernel, turbulence octaves), patterns' tiles and
//!   embedded rasters ([`MAX_PIXEL_WORK`]) and the pixels alive at once in nested layers and filter
//!   results ([`MAX_LIVE_PIXELS`]). svgz is not accepted (no inflate bombs to bound).

use std::collections::HashMap;
use std::io::Cursor;
use std::sync::{Arc, Mutex, OnceLock};

use resvg::tiny_skia;
use resvg::usvg;
use usvg::fontdb;

use crate::verdict::{Reason, Refusal};

/// The SVG text read at most (uncompressed; svgz is refused).
pub const MAX_SVG_BYTES: usize = 10 * 1024 * 1024;
/// Nodes roxmltree may build (elements, attributes' text, expanded entities): billion-laughs stop here.
pub const MAX_XML_NODES: u32 = 1_000_000;
/// Elements after `<use>` and marker instances are expanded (counted before usvg expands them).
pub const MAX_EXPANDED_ELEMENTS: u64 = 200_000;
/// Characters of text after `<use>` expansion (each is shaped and outlined).
pub const MAX_EXPANDED_TEXT_CHARS: u64 = 200_000;
/// How deep elements may nest, counted along children and along references (`url(#…)`, `href`)
/// to patterns, masks, clip paths, markers, filters and `<use>` targets, each element once per
/// chain. usvg and resvg recurse once per level on the guest's 1 MiB stack (the linear-memory
/// stack `wasm32-unknown-unknown` links with): measured in the convert component, nested `<g>`
/// (plain, with opacity, filter, mask or clip-path alike) trapped from 350 levels (352 on this
/// count), nested patterns from 161 (324), markers from 181 (363), `<tspan>` from 383; 200 leaves
/// room for the rest of the call stack and for hosts whose native wasm stack is smaller (V8).
pub const MAX_NESTING_DEPTH: u32 = 200;
/// The sum over unbroken runs of text (a run ends where a `<text>`, `<tspan>` or `<textPath>`
/// gives a position, or at a `<textPath>`) of the run's characters squared: laying a run out costs
/// in the square of its length (in the convert component 10,000 characters in one run took 0.19 s,
/// 20,000 0.62 s, 40,000 2.42 s; the same 40,000 in runs of 100, 0.20 s). 4·10^8 is one run of
/// 20,000 characters, about 0.6 s.
pub const MAX_TEXT_RUN_SQUARES: u64 = 400_000_000;
/// CSS rules × elements: usvg matches every rule against every element.
pub const MAX_CSS_MATCHES: u64 = 50_000_000;
/// Nodes of the usvg tree, text outlines, clip paths, masks, patterns included.
pub const MAX_TREE_NODES: u64 = 200_000;
/// Path segments in all (a pattern's counted once per use).
pub const MAX_PATH_SEGMENTS: u64 = 4_000_000;
/// Dashes a dashed stroke may make, in all.
pub const MAX_DASHES: u64 = 1_000_000;
/// How far from the canvas's origin, in output pixels, a path (its points and control points)
/// may reach: tiny-skia's anti-aliased scan converter panics on curves with control points far
/// out (found by fuzzing: a control point at -6e36). A million pixels is 500 times the largest
/// canvas; geometry that far out draws nothing on it.
pub const MAX_PATH_REACH: f32 = 1_000_000.0;
/// The outline work of filling and stroking, in units of about 0.1 µs in the convert component:
/// a stroked segment costs [`STROKE_SEGMENT_WORK`] and each output pixel of its control polygon
/// one more (the stroker and the scan converter follow the curve's length); a filled segment
/// [`FILL_SEGMENT_WORK`] and 0.08 per pixel (190,000 glyphs in short runs, about 2.5 million
/// filled segments, took 0.9 s). Measured there: 350,000 stroked 6-pixel curves took
/// 1.38 s, 20,000 stroked 570-pixel ones 0.86 s, 20,000 stroked 3,400-pixel ones 5.6 s, the same
/// filled 0.58 s. 12·10^6 is about 1.2 s.
pub const MAX_OUTLINE_WORK: f64 = 12_000_000.0;
pub const STROKE_SEGMENT_WORK: f64 = 40.0;
pub const FILL_SEGMENT_WORK: f64 = 2.0;
/// Pixel operations the render may take, estimated before it starts (about a second natively).
pub const MAX_PIXEL_WORK: u64 = 1_000_000_000;
/// Pixels alive at once (nested layers, masks, filter results, pattern tiles): 48 M × 4 bytes.
pub const MAX_LIVE_PIXELS: u64 = 48_000_000;
/// An embedded raster's side and pixels (read from its header before it is decoded).
pub const MAX_EMBEDDED_SIDE: u32 = 8192;
pub const MAX_EMBEDDED_PIXELS: u64 = 16_000_000;
/// A vector is drawn with its longer side at least this (unless `max_side` is smaller).
pub const MIN_LONG_SIDE: u32 = 512;

/// The family name of the font the component carries.
pub const FONT_FAMILY: &str = "DejaVu Sans";
static FONT: &[u8] = include_bytes!("../../fonts/DejaVuSans-subset.ttf");

fn refusal(raw: usize, reason: Reason, limit: Option<u64>, words: impl Into<String>) -> Refusal {
    Refusal::new(reason, raw as u64, limit, words)
}

fn undecodable(raw: usize, words: impl std::fmt::Display) -> Refusal {
    refusal(raw, Reason::Undecodable, None, format!("the SVG could not be rendered: {words}"))
}

fn too_complex(raw: usize, words: impl std::fmt::Display) -> Refusal {
    refusal(raw, Reason::DimensionsTooLarge, None, format!("the SVG is too costly to render: {words}"))
}

/// The font database: the one carried font, every generic family mapped to it.
fn fontdb() -> Arc<fontdb::Database> {
    static DB: OnceLock<Arc<fontdb::Database>> = OnceLock::new();
    DB.get_or_init(|| {
        let mut db = fontdb::Database::new();
        db.load_font_data(FONT.to_vec());
        db.set_serif_family(FONT_FAMILY);
        db.set_sans_serif_family(FONT_FAMILY);
        db.set_monospace_family(FONT_FAMILY);
        db.set_cursive_family(FONT_FAMILY);
        db.set_fantasy_family(FONT_FAMILY);
        Arc::new(db)
    })
    .clone()
}

/// Render `bytes` (SVG text) fitted into `max_side`², aspect kept, transparent background kept
/// (straight, not premultiplied, alpha).
pub fn render(bytes: &[u8], max_side: u32) -> Result<image::RgbaImage, Refusal> {
    let raw = bytes.len();
    if raw > MAX_SVG_BYTES {
        return Err(refusal(
            raw,
            Reason::RawTooLarge,
            Some(MAX_SVG_BYTES as u64),
            format!("the SVG is {raw} bytes; SVG text is rendered up to {MAX_SVG_BYTES} bytes"),
        ));
    }
    if bytes.starts_with(&[0x1f, 0x8b]) {
        return Err(undecodable(raw, "it is gzip-compressed (svgz), which is not accepted; send the SVG text"));
    }
    let text = std::str::from_utf8(bytes).map_err(|e| undecodable(raw, format!("it is not UTF-8 text ({e})")))?;
    // No entity resolver: an external entity (`<!ENTITY x SYSTEM "file:///…">`) is never read.
    let xml_options = roxmltree::ParsingOptions { allow_dtd: true, nodes_limit: MAX_XML_NODES, entity_resolver: None };
    let doc = roxmltree::Document::parse_with_options(text, xml_options).map_err(|e| match e {
        roxmltree::Error::NodesLimitReached => {
            too_complex(raw, format!("its XML has more than {MAX_XML_NODES} nodes (entities expanded)"))
        }
        e => undecodable(raw, format!("its XML is malformed ({e})")),
    })?;
    check_nesting(&doc, raw)?;
    check_expansion(&doc, raw)?;

    let embedded_error: Arc<Mutex<Option<String>>> = Arc::default();
    let options = usvg_options(embedded_error.clone());
    let tree = usvg::Tree::from_xmltree(&doc, &options).map_err(|e| match e {
        usvg::Error::ElementsLimitReached => too_complex(raw, "it has more than 1,000,000 elements once expanded"),
        e => undecodable(raw, e),
    })?;
    if let Some(words) = embedded_error.lock().ok().and_then(|mut e| e.take()) {
        return Err(undecodable(raw, words));
    }

    let size = tree.size();
    let (width, height) = fit(size.width(), size.height(), max_side);
    let scale_x = width as f32 / size.width();
    let scale_y = height as f32 / size.height();
    let transform = tiny_skia::Transform::from_scale(scale_x, scale_y);
    Cost::of(&tree, transform, width, height).check(raw)?;

    let mut pixmap = tiny_skia::Pixmap::new(width, height)
        .ok_or_else(|| undecodable(raw, format!("a {width}×{height} canvas could not be made")))?;
    resvg::render(&tree, transform, &mut pixmap.as_mut());
    let mut out = Vec::with_capacity(pixmap.data().len());
    for pixel in pixmap.pixels() {
        let c = pixel.demultiply();
        out.extend_from_slice(&[c.red(), c.green(), c.blue(), c.alpha()]);
    }
    image::RgbaImage::from_raw(width, height, out).ok_or_else(|| undecodable(raw, "the canvas had the wrong length"))
}

/// The output size: the longer side between `MIN_LONG_SIDE` and `max_side` (the shorter side at
/// least 1 pixel), aspect kept.
fn fit(width: f32, height: f32, max_side: u32) -> (u32, u32) {
    let max_side = max_side.max(1);
    let long = width.max(height) as f64;
    let target = (long.ceil() as u64).clamp(MIN_LONG_SIDE.min(max_side) as u64, max_side as u64) as f64;
    let scale = target / long;
    let side = |v: f32| ((v as f64 * scale).round() as u64).clamp(1, max_side as u64) as u32;
    (side(width), side(height))
}

fn usvg_options(embedded_error: Arc<Mutex<Option<String>>>) -> usvg::Options<'static> {
    let fail = move |words: String| {
        if let Ok(mut slot) = embedded_error.lock() {
            slot.get_or_insert(words);
        }
        None
    };
    usvg::Options {
        resources_dir: None,
        font_family: FONT_FAMILY.to_owned(),
        fontdb: fontdb(),
        style_sheet: None,
        image_href_resolver: usvg::ImageHrefResolver {
            resolve_data: Box::new(move |_claimed, data, _| match embedded_raster(data) {
                Ok(kind) => kind,
                Err(words) => fail(words),
            }),
            // A path or URL: never resolved (not drawn).
            resolve_string: Box::new(|_, _| None),
        },
        ..usvg::Options::default()
    }
}

/// A `data:` URL's bytes: a PNG, JPEG, GIF or WebP by its magic, within the embedded limits. `Ok(None)`:
/// not drawn (an SVG inside the SVG); `Err`: the whole SVG is refused.
fn embedded_raster(data: Arc<Vec<u8>>) -> Result<Option<usvg::ImageKind>, String> {
    let format = match image::guess_format(&data) {
        Ok(
            f @ (image::ImageFormat::Png
            | image::ImageFormat::Jpeg
            | image::ImageFormat::Gif
            | image::ImageFormat::WebP),
        ) => f,
        _ if looks_like_svg(&data) => return Ok(None),
        _ => return Err("an embedded image (data: URL) is not a PNG, JPEG, GIF or WebP".into()),
    };
    let (w, h) = embedded_dimensions(&data, format)
        .map_err(|e| format!("an embedded {format:?} image (data: URL) is undecodable ({e})"))?;
    if w > MAX_EMBEDDED_SIDE || h > MAX_EMBEDDED_SIDE || w as u64 * h as u64 > MAX_EMBEDDED_PIXELS {
        return Err(format!(
            "an embedded {format:?} image (data: URL) is {w}×{h}; embedded images are drawn up to \
             {MAX_EMBEDDED_SIDE} px a side and {MAX_EMBEDDED_PIXELS} pixels"
        ));
    }
    Ok(Some(match format {
        image::ImageFormat::Png => usvg::ImageKind::PNG(data),
        image::ImageFormat::Jpeg => usvg::ImageKind::JPEG(data),
        image::ImageFormat::Gif => usvg::ImageKind::GIF(data),
        _ => usvg::ImageKind::WEBP(data),
    }))
}

fn embedded_dimensions(data: &[u8], format: image::ImageFormat) -> Result<(u32, u32), image::ImageError> {
    image::ImageReader::with_format(Cursor::new(data), format).into_dimensions()
}

fn looks_like_svg(data: &[u8]) -> bool {
    let head = &data[..data.len().min(1024)];
    std::str::from_utf8(head).map(|s| s.contains("<svg")).unwrap_or(false)
}

const SVG_NS: &str = "http://www.w3.org/2000/svg";
const XLINK_NS: &str = "http://www.w3.org/1999/xlink";

fn href<'a>(node: roxmltree::Node<'a, '_>) -> Option<&'a str> {
    node.attribute((XLINK_NS, "href")).or_else(|| node.attribute("href"))
}

fn is_shape(node: roxmltree::Node) -> bool {
    matches!(node.tag_name().name(), "path" | "line" | "polyline" | "polygon")
}

/// The ids a value names with `url(#id)` (any attribute or CSS text: `fill`, `mask`, `style`, …).
fn url_refs(value: &str) -> impl Iterator<Item = &str> {
    value.split("url(").skip(1).filter_map(|rest| {
        let rest = rest.trim_start().trim_start_matches(['"', '\'']).strip_prefix('#')?;
        let end = rest.find(|c: char| c == ')' || c == '"' || c == '\'' || c.is_whitespace()).unwrap_or(rest.len());
        Some(&rest[..end])
    })
}

/// The nesting usvg and resvg will recurse through, measured before they do: the longest chain of
/// elements along children and references ([`MAX_NESTING_DEPTH`]). A reference cycle counts once
/// (usvg drops the link that closes it). References written in a stylesheet are not tied to
/// elements here: each target one names (other than a gradient, which draws no content) adds its
/// own depth, as if every chain went through all of them.
fn check_nesting(doc: &roxmltree::Document, raw: usize) -> Result<(), Refusal> {
    let mut ids: HashMap<&str, roxmltree::NodeId> = HashMap::new();
    for node in doc.descendants().filter(|n| n.is_element()) {
        if let Some(id) = node.attribute("id") {
            ids.entry(id).or_insert(node.id());
        }
    }
    let references = |node: roxmltree::Node<'_, '_>| -> Vec<roxmltree::NodeId> {
        let mut out: Vec<roxmltree::NodeId> = node
            .attributes()
            .flat_map(|a| url_refs(a.value()))
            .chain(href(node).and_then(|h| h.strip_prefix('#')))
            .filter_map(|id| ids.get(id).copied())
            .collect();
        out.dedup();
        out
    };
    // Post-order over children and references, iteratively (no recursion on hostile depth).
    // state: 0 unseen, 1 open, 2 done.
    let len = doc.descendants().count() + 1;
    let mut depth = vec![0u32; len];
    let mut state = vec![0u8; len];
    let mut stack = vec![(doc.root(), false)];
    while let Some((node, closing)) = stack.pop() {
        let i = node.id().get_usize();
        if !closing {
            if state[i] != 0 {
                continue;
            }
            state[i] = 1;
            stack.push((node, true));
            stack.extend(node.children().filter(|c| c.is_element()).map(|c| (c, false)));
            stack.extend(references(node).into_iter().filter_map(|t| doc.get_node(t)).map(|t| (t, false)));
            continue;
        }
        let done = |n: roxmltree::NodeId| if state[n.get_usize()] == 2 { depth[n.get_usize()] } else { 0 };
        let below = node
            .children()
            .filter(|c| c.is_element())
            .map(|c| c.id())
            .chain(references(node))
            .map(done)
            .max()
            .unwrap_or(0);
        depth[i] = below.saturating_add(u32::from(node.is_element()));
        state[i] = 2;
    }
    let mut deepest = depth[doc.root().id().get_usize()];
    let mut styled: Vec<roxmltree::NodeId> = doc
        .descendants()
        .filter(|n| n.tag_name().namespace() == Some(SVG_NS) && n.tag_name().name() == "style")
        .flat_map(|n| n.children().filter_map(|c| c.text()).flat_map(url_refs).collect::<Vec<_>>())
        .filter_map(|id| ids.get(id).copied())
        .filter(|&t| doc.get_node(t).is_some_and(|n| !n.tag_name().name().ends_with("Gradient")))
        .collect();
    styled.sort_unstable_by_key(|t| t.get_usize());
    styled.dedup();
    for t in styled {
        deepest = deepest.saturating_add(depth[t.get_usize()]);
    }
    if deepest > MAX_NESTING_DEPTH {
        return Err(too_complex(
            raw,
            format!(
                "its elements nest {deepest} deep (through groups, text and references to patterns, masks, clip \
                 paths, markers, filters and <use>); the renderer recurses once per level, and the limit is \
                 {MAX_NESTING_DEPTH}"
            ),
        ));
    }
    Ok(())
}

/// The sum of the squares of a `<text>` element's unbroken runs (see [`MAX_TEXT_RUN_SQUARES`]).
fn text_run_squares(text: roxmltree::Node) -> u64 {
    let (mut run, mut squares) = (0u64, 0u64);
    for node in text.descendants() {
        if node.is_element() {
            let positioned = node.attribute("x").is_some() || node.attribute("y").is_some();
            if positioned || node.tag_name().name() == "textPath" {
                squares = squares.saturating_add(run.saturating_mul(run));
                run = 0;
            }
        } else if let Some(t) = node.text() {
            run += t.chars().count() as u64;
        }
    }
    squares.saturating_add(run.saturating_mul(run))
}

/// What usvg will build from the parsed document, counted before it does: `<use>` instances
/// (each counts its target again, recursively; a cycle counts nothing, as usvg drops it), marker
/// instances (a marker's content per vertex of a shape that may carry one), text characters, and
/// CSS rules matched against every element.
fn check_expansion(doc: &roxmltree::Document, raw: usize) -> Result<(), Refusal> {
    #[derive(Clone, Copy, Default)]
    struct Count {
        elements: u64,
        chars: u64,
        run_squares: u64,
    }
    impl Count {
        fn add(&mut self, other: Count, times: u64) {
            self.elements = self.elements.saturating_add(other.elements.saturating_mul(times));
            self.chars = self.chars.saturating_add(other.chars.saturating_mul(times));
            self.run_squares = self.run_squares.saturating_add(other.run_squares.saturating_mul(times));
        }
    }

    let mut ids: HashMap<&str, roxmltree::NodeId> = HashMap::new();
    let mut markers = Vec::new();
    let mut css_rules = 0u64;
    let mut marker_words = false;
    for node in doc.descendants().filter(|n| n.is_element()) {
        if let Some(id) = node.attribute("id") {
            ids.entry(id).or_insert(node.id());
        }
        let in_svg = node.tag_name().namespace() == Some(SVG_NS);
        if in_svg && node.tag_name().name() == "marker" {
            markers.push(node.id());
        }
        if in_svg && node.tag_name().name() == "style" {
            let css: String = node.children().filter_map(|c| c.text()).collect();
            css_rules += css.matches('{').count() as u64;
            marker_words |= css.contains("marker");
        }
        marker_words |= node.attributes().any(|a| a.name().starts_with("marker") || a.value().contains("marker"));
    }

    let target = |node: roxmltree::Node| -> Option<roxmltree::NodeId> {
        if node.tag_name().name() != "use" {
            return None;
        }
        ids.get(href(node)?.strip_prefix('#')?).copied()
    };

    // Post-order over the DAG the document and its `<use>` links make, iteratively (no recursion
    // on hostile depth). state: 0 unseen, 1 open, 2 done.
    let len = doc.descendants().count() + 1;
    let count_all = |marker_each: u64| -> Vec<Count> {
        let mut memo = vec![Count::default(); len];
        let mut state = vec![0u8; len];
        let index = |id: roxmltree::NodeId| id.get_usize();
        let mut stack = vec![(doc.root(), false)];
        while let Some((node, closing)) = stack.pop() {
            let i = index(node.id());
            if !closing {
                if state[i] != 0 {
                    continue;
                }
                state[i] = 1;
                stack.push((node, true));
                for child in node.children() {
                    stack.push((child, false));
                }
                if let Some(t) = target(node) {
                    stack.push((doc.get_node(t).expect("an id of this document"), false));
                }
                continue;
            }
            let mut count = Count::default();
            if node.is_element() {
                count.elements = 1;
                if node.tag_name().name() == "text" {
                    count.run_squares = text_run_squares(node);
                }
            } else if let Some(text) = node.text() {
                count.chars = text.chars().count() as u64;
            }
            for child in node.children() {
                if state[index(child.id())] == 2 {
                    count.add(memo[index(child.id())], 1);
                }
            }
            if let Some(t) = target(node)
                && state[index(t)] == 2
            {
                count.add(memo[index(t)], 1);
            }
            if marker_each > 0 && is_shape(node) {
                let data = node.attribute("d").or_else(|| node.attribute("points")).unwrap_or("");
                let vertices = data.len() as u64 / 2 + 2;
                count.elements = count.elements.saturating_add(vertices.saturating_mul(marker_each));
            }
            memo[i] = count;
            state[i] = 2;
        }
        memo
    };
    let mut memo = count_all(0);
    if marker_words && !markers.is_empty() {
        let largest = markers.iter().map(|m| memo[m.get_usize()].elements).max().unwrap_or(0);
        memo = count_all(largest.max(1));
    }
    let total = memo[doc.root().id().get_usize()];
    if total.elements > MAX_EXPANDED_ELEMENTS {
        return Err(too_complex(
            raw,
            format!(
                "it expands (<use>, markers) to about {} elements; the limit is {MAX_EXPANDED_ELEMENTS}",
                total.elements
            ),
        ));
    }
    if total.chars > MAX_EXPANDED_TEXT_CHARS {
        return Err(too_complex(
            raw,
            format!("it has {} characters of text once expanded; the limit is {MAX_EXPANDED_TEXT_CHARS}", total.chars),
        ));
    }
    if total.run_squares > MAX_TEXT_RUN_SQUARES {
        let run = (total.run_squares as f64).sqrt().round();
        return Err(too_complex(
            raw,
            format!(
                "its text runs unbroken for too long (as costly to lay out as one run of {run} characters; runs are \
                 laid out up to {} characters, as text elements or <tspan>s with their own x or y break them)",
                (MAX_TEXT_RUN_SQUARES as f64).sqrt().round()
            ),
        ));
    }
    let matches = css_rules.saturating_mul(total.elements);
    if matches > MAX_CSS_MATCHES {
        return Err(too_complex(
            raw,
            format!("{css_rules} CSS rules over {} elements is more matching than {MAX_CSS_MATCHES}", total.elements),
        ));
    }
    Ok(())
}

/// The render's cost, estimated from the usvg tree at the output transform.
struct Cost {
    nodes: u64,
    segments: u64,
    outline: f64,
    dashes: u64,
    work: u64,
    /// The costliest single item, for the refusal's words.
    worst: (u64, String),
    live: u64,
    canvas: tiny_skia::Rect,
    /// The tree's own error (a limit passed on the way), named.
    error: Option<String>,
}

impl Cost {
    fn of(tree: &usvg::Tree, transform: tiny_skia::Transform, width: u32, height: u32) -> Cost {
        let (w, h) = (width as f32, height as f32);
        let mut cost = Cost {
            nodes: 0,
            segments: 0,
            outline: 0.0,
            dashes: 0,
            work: 0,
            worst: (0, String::new()),
            live: 0,
            // resvg's largest layer: the canvas and twice it on every side.
            canvas: tiny_skia::Rect::from_xywh(-2.0 * w, -2.0 * h, 5.0 * w, 5.0 * h).expect("a positive canvas"),
            error: None,
        };
        let area = width as u64 * height as u64;
        cost.live = area + cost.group(tree.root(), transform, area);
        cost
    }

    fn check(&self, raw: usize) -> Result<(), Refusal> {
        if let Some(words) = &self.error {
            return Err(too_complex(raw, words));
        }
        if self.nodes > MAX_TREE_NODES {
            return Err(too_complex(
                raw,
                format!("it has {} nodes to draw; the limit is {MAX_TREE_NODES}", self.nodes),
            ));
        }
        if self.dashes > MAX_DASHES {
            return Err(too_complex(
                raw,
                format!("its dashed strokes make {} dashes; the limit is {MAX_DASHES}", self.dashes),
            ));
        }
        if self.segments > MAX_PATH_SEGMENTS {
            return Err(too_complex(
                raw,
                format!("its paths have {} segments; the limit is {MAX_PATH_SEGMENTS}", self.segments),
            ));
        }
        if self.outline > MAX_OUTLINE_WORK {
            return Err(too_complex(
                raw,
                format!(
                    "filling and stroking its paths takes about {:.0} units of outline work (segments and their \
                     length in pixels); the limit is {MAX_OUTLINE_WORK}",
                    self.outline
                ),
            ));
        }
        if self.work > MAX_PIXEL_WORK {
            return Err(too_complex(
                raw,
                format!(
                    "drawing it takes about {} pixel operations (the largest part: {}, {}); the limit is {MAX_PIXEL_WORK}",
                    self.work, self.worst.1, self.worst.0
                ),
            ));
        }
        if self.live > MAX_LIVE_PIXELS {
            return Err(too_complex(
                raw,
                format!(
                    "its nested layers, masks and filters need {} pixels at once; the limit is {MAX_LIVE_PIXELS}",
                    self.live
                ),
            ));
        }
        Ok(())
    }

    fn spend(&mut self, ops: u64, what: impl FnOnce() -> String) {
        self.work = self.work.saturating_add(ops);
        if ops > self.worst.0 {
            self.worst = (ops, what());
        }
    }

    /// Pixels of `rect` (user space) under `ts`, within resvg's largest layer and `cap`.
    fn area(&self, rect: tiny_skia::Rect, ts: tiny_skia::Transform, cap: u64) -> u64 {
        let px = rect
            .transform(ts)
            .and_then(|r| r.intersect(&self.canvas))
            .map(|r| (r.width().ceil() as u64 + 4) * (r.height().ceil() as u64 + 4))
            .unwrap_or(0);
        px.min(cap)
    }

    /// Walk a group drawn under `ts` onto a target of `target` pixels; the pixels it keeps alive
    /// at its peak.
    fn group(&mut self, group: &usvg::Group, parent_ts: tiny_skia::Transform, target: u64) -> u64 {
        self.nodes += 1;
        if self.error.is_some() || self.nodes > MAX_TREE_NODES {
            return 0;
        }
        let ts = parent_ts.pre_concat(group.transform());
        let mut own = 0u64;
        let mut extra_peak = 0u64;
        let mut layer = target;
        if group.should_isolate() {
            let bbox = group.layer_bounding_box().to_rect();
            layer = self.area(bbox, ts, target.saturating_mul(25)).max(1);
            own += layer;
            self.spend(layer * 2, || "a layer".into());
            for filter in group.filters() {
                let prims = filter.primitives().len() as u64;
                own = own.saturating_add(layer.saturating_mul(prims + 2));
                for p in filter.primitives() {
                    let ops = self.primitive(p.kind(), ts, layer);
                    self.spend(ops, || format!("a filter's {}", primitive_name(p.kind())));
                    if let usvg::filter::Kind::Image(image) = p.kind() {
                        extra_peak = extra_peak.max(self.group(image.root(), ts, layer));
                    }
                }
            }
            let mut clip = group.clip_path();
            while let Some(c) = clip {
                own += layer;
                self.spend(layer * 2, || "a clip path".into());
                extra_peak = extra_peak.max(self.group(c.root(), ts.pre_concat(c.transform()), layer));
                clip = c.clip_path();
            }
            let mut mask = group.mask();
            while let Some(m) = mask {
                own += layer;
                self.spend(layer * 2, || "a mask".into());
                extra_peak = extra_peak.max(self.group(m.root(), ts, layer));
                mask = m.mask();
            }
        }
        let mut child_peak = 0u64;
        for child in group.children() {
            let peak = match child {
                usvg::Node::Group(g) => self.group(g, ts, layer),
                usvg::Node::Path(p) => self.path(p, ts, layer),
                usvg::Node::Image(i) => self.image(i, ts, layer),
                usvg::Node::Text(t) => self.group(t.flattened(), ts, layer),
            };
            child_peak = child_peak.max(peak);
            if self.error.is_some() {
                break;
            }
        }
        own.saturating_add(child_peak.max(extra_peak))
    }

    fn primitive(&mut self, kind: &usvg::filter::Kind, ts: tiny_skia::Transform, area: u64) -> u64 {
        use usvg::filter::Kind;
        let (sx, sy) = ts.get_scale();
        let side = (area as f64).sqrt();
        let radius = |r: f32, s: f32| ((r as f64 * s as f64).round().min(side) * 2.0 + 1.0) as u64;
        let per_pixel = match kind {
            Kind::Morphology(m) => radius(m.radius_x().get(), sx).saturating_mul(radius(m.radius_y().get(), sy)),
            Kind::ConvolveMatrix(c) => c.matrix().columns() as u64 * c.matrix().rows() as u64,
            Kind::Turbulence(t) => (t.num_octaves() as u64).saturating_mul(8),
            Kind::GaussianBlur(b) => self.blur(b.std_dev_x().get(), b.std_dev_y().get(), sx, sy, side),
            Kind::DropShadow(d) => self.blur(d.std_dev_x().get(), d.std_dev_y().get(), sx, sy, side),
            Kind::DiffuseLighting(_) | Kind::SpecularLighting(_) => 20,
            _ => 2,
        };
        area.saturating_mul(per_pixel.max(1))
    }

    /// A blur's cost per pixel; a standard deviation wider than the layer (every pixel the same
    /// mean: nothing left to see) is refused rather than computed.
    fn blur(&mut self, dx: f32, dy: f32, sx: f32, sy: f32, side: f64) -> u64 {
        let sigma = (dx as f64 * sx as f64).max(dy as f64 * sy as f64);
        if !sigma.is_finite() || sigma > side.max(MIN_LONG_SIDE as f64) {
            self.error = Some(format!(
                "a blur's standard deviation is {sigma:.0} pixels, wider than the {side:.0}-pixel layer it blurs"
            ));
        }
        8
    }

    fn path(&mut self, path: &usvg::Path, ts: tiny_skia::Transform, target: u64) -> u64 {
        self.nodes += 1;
        let data = path.data();
        // The points and control points (a huge stroke width is the stroker's to bound: it is).
        let reach = data
            .bounds()
            .transform(ts)
            .map(|r| r.left().abs().max(r.right().abs()).max(r.top().abs()).max(r.bottom().abs()))
            .filter(|r| r.is_finite());
        match reach {
            Some(r) if r <= MAX_PATH_REACH => {}
            Some(r) => {
                self.error = Some(format!(
                    "a path reaches {r:.0} px from the canvas's origin; the rasteriser's bound is {MAX_PATH_REACH} px"
                ));
                return 0;
            }
            None => {
                self.error = Some("a path's extent cannot be measured (it overflows)".into());
                return 0;
            }
        }
        let segments = data.verbs().len() as u64;
        let (sx, sy) = ts.get_scale();
        let length_px = polyline_length(data) * f64::from(sx.abs().max(sy.abs()));
        let mut peak = 0;
        for (paint, stroke) in
            [(path.fill().map(|f| f.paint()), None), (path.stroke().map(|s| s.paint()), path.stroke())]
        {
            let Some(paint) = paint else { continue };
            self.segments = self.segments.saturating_add(segments);
            self.outline += match stroke {
                Some(_) => segments as f64 * STROKE_SEGMENT_WORK + length_px,
                None => segments as f64 * FILL_SEGMENT_WORK + length_px * 0.08,
            };
            let bbox = match stroke {
                Some(_) => path.stroke_bounding_box(),
                None => path.bounding_box(),
            };
            let px = self.area(bbox, ts, target);
            self.spend(px, || "a path".into());
            if let Some(stroke) = stroke
                && let Some(dashes) = stroke.dasharray()
            {
                let period: f32 = dashes.iter().sum();
                let length = polyline_length(data);
                let n = if period > 0.0 { (length / period as f64 * dashes.len() as f64).ceil() } else { 0.0 };
                self.dashes = self.dashes.saturating_add(if n.is_finite() { n as u64 } else { u64::MAX });
                self.outline += n * STROKE_SEGMENT_WORK;
                self.segments = self.segments.saturating_add(if n.is_finite() { n as u64 } else { u64::MAX });
            }
            if let usvg::Paint::Pattern(pattern) = paint {
                let pts = ts.pre_concat(pattern.transform());
                let (sx, sy) = pts.get_scale();
                let rect = pattern.rect();
                let tile = (rect.width() as f64 * sx as f64).round() * (rect.height() as f64 * sy as f64).round();
                if !tile.is_finite() || tile > (MAX_LIVE_PIXELS as f64) {
                    self.error = Some(format!("a pattern's tile is {tile} pixels; the limit is {MAX_LIVE_PIXELS}"));
                    return 0;
                }
                let tile = (tile as u64).max(1);
                self.spend(tile + px, || "a pattern".into());
                let inner = self.group(pattern.root(), tiny_skia::Transform::from_scale(sx, sy), tile);
                peak = peak.max(tile + inner);
            }
        }
        peak
    }

    fn image(&mut self, image: &usvg::Image, ts: tiny_skia::Transform, target: u64) -> u64 {
        self.nodes += 1;
        let decoded = match image.kind() {
            usvg::ImageKind::PNG(d) | usvg::ImageKind::JPEG(d) | usvg::ImageKind::GIF(d) | usvg::ImageKind::WEBP(d) => {
                image::guess_format(d)
                    .ok()
                    .and_then(|f| embedded_dimensions(d, f).ok())
                    .map(|(w, h)| w as u64 * h as u64)
                    .unwrap_or(0)
            }
            usvg::ImageKind::SVG(tree) => return self.group(tree.root(), ts, target),
        };
        let px = self.area(image.bounding_box(), ts, target);
        self.spend(decoded * 2 + px, || "an embedded image".into());
        decoded
    }
}

fn primitive_name(kind: &usvg::filter::Kind) -> &'static str {
    use usvg::filter::Kind;
    match kind {
        Kind::Blend(_) => "feBlend",
        Kind::ColorMatrix(_) => "feColorMatrix",
        Kind::ComponentTransfer(_) => "feComponentTransfer",
        Kind::Composite(_) => "feComposite",
        Kind::ConvolveMatrix(_) => "feConvolveMatrix",
        Kind::DiffuseLighting(_) => "feDiffuseLighting",
        Kind::DisplacementMap(_) => "feDisplacementMap",
        Kind::DropShadow(_) => "feDropShadow",
        Kind::Flood(_) => "feFlood",
        Kind::GaussianBlur(_) => "feGaussianBlur",
        Kind::Image(_) => "feImage",
        Kind::Merge(_) => "feMerge",
        Kind::Morphology(_) => "feMorphology",
        Kind::Offset(_) => "feOffset",
        Kind::SpecularLighting(_) => "feSpecularLighting",
        Kind::Tile(_) => "feTile",
        Kind::Turbulence(_) => "feTurbulence",
    }
}

/// The length of a path's control polygon: at least its length (curves lie within their hull).
fn polyline_length(path: &tiny_skia::Path) -> f64 {
    let points = path.points();
    points.windows(2).map(|w| ((w[1].x - w[0].x) as f64).hypot((w[1].y - w[0].y) as f64)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_deadline::{HOSTILE, within};
    use base64::Engine as _;

    fn doc(attrs: &str, body: &str) -> String {
        format!(
            r#"<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" {attrs}>{body}</svg>"#
        )
    }

    fn ok(svg: &str) -> image::RgbaImage {
        render(svg.as_bytes(), 2000).unwrap_or_else(|r| panic!("refused: {}", r.message))
    }

    fn refused(svg: &str) -> Refusal {
        match render(svg.as_bytes(), 2000) {
            Ok(img) => panic!("rendered {}×{} instead of refusing", img.width(), img.height()),
            Err(r) => r,
        }
    }

    fn px(img: &image::RgbaImage, x: u32, y: u32) -> [u8; 4] {
        img.get_pixel(x, y).0
    }

    fn inked(img: &image::RgbaImage, x0: u32, y0: u32, x1: u32, y1: u32) -> usize {
        (y0..y1).flat_map(|y| (x0..x1).map(move |x| (x, y))).filter(|&(x, y)| img.get_pixel(x, y).0[3] > 0).count()
    }

    fn png(w: u32, h: u32, rgba: [u8; 4]) -> Vec<u8> {
        let img = image::RgbaImage::from_pixel(w, h, image::Rgba(rgba));
        let mut out = Vec::new();
        img.write_to(&mut Cursor::new(&mut out), image::ImageFormat::Png).unwrap();
        out
    }

    fn data_url(bytes: &[u8]) -> String {
        format!("data:image/png;base64,{}", base64::engine::general_purpose::STANDARD.encode(bytes))
    }

    #[test]
    fn shapes_are_drawn_where_they_are() {
        let img = ok(&doc(
            r#"width="200" height="100""#,
            r#"<rect width="200" height="100" fill="blue"/><rect x="100" y="0" width="100" height="50" fill="red"/>
               <circle cx="50" cy="50" r="20" fill="lime"/>"#,
        ));
        // 200×100 is scaled up so its longer side is 512.
        assert_eq!(img.dimensions(), (512, 256));
        assert_eq!(px(&img, 10, 200), [0, 0, 255, 255]);
        assert_eq!(px(&img, 400, 60), [255, 0, 0, 255]);
        assert_eq!(px(&img, 128, 128), [0, 255, 0, 255]);
    }

    #[test]
    fn gradients_run_from_stop_to_stop() {
        let img = ok(&doc(
            r#"width="100" height="10""#,
            r#"<defs><linearGradient id="g"><stop offset="0" stop-color="black"/><stop offset="1" stop-color="white"/></linearGradient></defs>
               <rect width="100" height="10" fill="url(#g)"/>"#,
        ));
        let (l, m, r) = (px(&img, 2, 20)[0], px(&img, 256, 20)[0], px(&img, 509, 20)[0]);
        assert!(l < 10 && r > 245 && (100..160).contains(&m), "{l} {m} {r}");
    }

    #[test]
    fn text_is_drawn_with_the_carried_font_whatever_family_it_names() {
        let text = |family: &str| {
            ok(&doc(
                r#"width="400" height="100""#,
                &format!(r#"<text x="10" y="60" font-size="40" font-family="{family}">Hello ΩЖé</text>"#),
            ))
        };
        let sans = text("sans-serif");
        // Ink where the text is, none far below it.
        assert!(inked(&sans, 0, 0, 512, 90) > 2000, "no text drawn");
        assert_eq!(inked(&sans, 0, 100, 512, 128), 0);
        for family in ["serif", "monospace", "cursive", "fantasy", "Comic Sans MS", "'Helvetica Neue', Arial"] {
            assert!(text(family) == sans, "{family} was not drawn with the carried font");
        }
    }

    #[test]
    fn a_view_box_alone_gives_the_size_and_aspect() {
        let img = ok(&doc(r#"viewBox="0 0 40 20""#, r#"<rect width="40" height="20" fill="red"/>"#));
        assert_eq!(img.dimensions(), (512, 256));
        assert_eq!(px(&img, 511, 255), [255, 0, 0, 255]);
    }

    #[test]
    fn a_huge_view_box_is_fitted_into_max_side() {
        let img = ok(&doc(r#"viewBox="0 0 1000000 500000""#, r#"<rect width="1000000" height="500000" fill="red"/>"#));
        assert_eq!(img.dimensions(), (2000, 1000));
        let img = render(doc(r#"viewBox="0 0 1000000 500000""#, "").as_bytes(), 768).unwrap();
        assert_eq!(img.dimensions(), (768, 384));
    }

    #[test]
    fn physical_units_no_size_and_tiny_icons() {
        // 50 mm × 25 mm at 96 dpi is 189 × 94 px: scaled up to 512 on the longer side.
        let img = ok(&doc(r#"width="50mm" height="25mm""#, ""));
        assert_eq!(img.dimensions(), (512, 256));
        // No size at all: usvg's 100 × 100.
        assert_eq!(ok(&doc("", "")).dimensions(), (512, 512));
        // Percentages without a viewBox: of that default (100 × 50).
        assert_eq!(ok(&doc(r#"width="100%" height="50%""#, "")).dimensions(), (512, 256));
        // A 16 × 16 icon is drawn at 512 × 512, not 16 × 16; with a smaller max_side, at that.
        let icon = doc(r#"width="16" height="16""#, r#"<rect x="4" y="4" width="8" height="8" fill="red"/>"#);
        let img = ok(&icon);
        assert_eq!(img.dimensions(), (512, 512));
        assert_eq!(px(&img, 256, 256), [255, 0, 0, 255]);
        assert_eq!(px(&img, 64, 64)[3], 0);
        assert_eq!(render(icon.as_bytes(), 300).unwrap().dimensions(), (300, 300));
        // A large drawing is not scaled up: 1200 × 900 stays.
        assert_eq!(ok(&doc(r#"width="1200" height="900""#, "")).dimensions(), (1200, 900));
        // An extreme aspect keeps one pixel on its short side.
        assert_eq!(ok(&doc(r#"width="100000" height="1""#, "")).dimensions(), (2000, 1));
    }

    #[test]
    fn transparency_is_kept_and_not_premultiplied() {
        let img = ok(&doc(
            r#"width="100" height="100""#,
            r#"<rect x="50" width="50" height="100" fill="red" fill-opacity="0.5"/>"#,
        ));
        assert_eq!(px(&img, 10, 10), [0, 0, 0, 0]);
        let [r, g, b, a] = px(&img, 400, 10);
        assert!(r >= 254 && g == 0 && b == 0 && (126..=129).contains(&a), "{r} {g} {b} {a}");
    }

    #[test]
    fn an_embedded_png_is_drawn_and_an_oversized_one_refuses_the_svg() {
        let body =
            format!(r#"<image width="100" height="100" xlink:href="{}"/>"#, data_url(&png(4, 4, [0, 0, 255, 255])));
        let img = ok(&doc(r#"width="100" height="100""#, &body));
        assert_eq!(px(&img, 256, 256), [0, 0, 255, 255]);

        // A PNG whose header says 20000 × 20000 (a 1.6 GB decode), its CRC fixed.
        let mut bomb = png(1, 1, [0, 0, 0, 255]);
        bomb[16..20].copy_from_slice(&20_000u32.to_be_bytes());
        bomb[20..24].copy_from_slice(&20_000u32.to_be_bytes());
        let mut crc = flate2::Crc::new();
        crc.update(&bomb[12..29]);
        bomb[29..33].copy_from_slice(&crc.sum().to_be_bytes());
        let r = refused(&doc(
            r#"width="100" height="100""#,
            &format!(r#"<image width="100" height="100" href="{}"/>"#, data_url(&bomb)),
        ));
        assert_eq!(r.reason, Reason::Undecodable);
        assert!(r.message.contains("20000×20000"), "{}", r.message);

        // Bytes that are no image at all.
        let r = refused(&doc("", r#"<image width="10" height="10" href="data:image/png;base64,AAAAAAAA"/>"#));
        assert!(r.message.contains("not a PNG, JPEG, GIF or WebP"), "{}", r.message);
    }

    #[test]
    fn nothing_outside_the_bytes_is_read() {
        let dir = std::env::temp_dir().join(format!("mediagate-svg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let png_path = dir.join("red.png");
        std::fs::write(&png_path, png(4, 4, [255, 0, 0, 255])).unwrap();
        let css_path = dir.join("red.css");
        std::fs::write(&css_path, "rect { fill: red }").unwrap();
        let other = dir.join("other.svg");
        std::fs::write(&other, doc("", r#"<rect id="x" width="100" height="100" fill="red"/>"#)).unwrap();
        let (png_path, css_path, other) = (png_path.display(), css_path.display(), other.display());

        for body in [
            format!(r#"<image width="100" height="100" href="{png_path}"/>"#),
            format!(r#"<image width="100" height="100" xlink:href="file://{png_path}"/>"#),
            r#"<image width="100" height="100" href="red.png"/>"#.to_string(),
            r#"<image width="100" height="100" href="http://127.0.0.1:9/red.png"/>"#.to_string(),
            format!(r#"<use xlink:href="{other}#x"/><use href="file://{other}#x"/>"#),
            format!(
                r#"<style>@import url("{css_path}"); @import "file://{css_path}";</style><rect width="100" height="100" fill="none"/>"#
            ),
            format!(r#"<text x="0" y="50" style="font-family: url({css_path})">X</text><rect width="0" height="0"/>"#),
        ] {
            let img = ok(&doc(r#"width="100" height="100""#, &body));
            let red = img.pixels().filter(|p| p.0[0] > 200 && p.0[1] < 50 && p.0[3] > 200).count();
            assert_eq!(red, 0, "something outside the SVG was drawn: {body}");
        }

        // An external entity: never read (the reference stays unexpanded or the XML is refused).
        let svg = format!(
            r#"<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY ext SYSTEM "file://{other}">]>{}"#,
            doc(r#"width="100" height="100""#, "&ext;")
        );
        if let Ok(img) = render(svg.as_bytes(), 2000) {
            assert!(img.pixels().all(|p| p.0[3] == 0));
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    // Hostile input: each ends in a refusal (the tests finish in well under a second each).

    #[test]
    fn oversized_compressed_and_malformed_text_is_refused() {
        within(
            HOSTILE,
            "oversized_compressed_and_malformed_text_is_refused",
            oversized_compressed_and_malformed_text_is_refused_body,
        )
    }

    fn oversized_compressed_and_malformed_text_is_refused_body() {
        let big = format!("<svg>{}</svg>", " ".repeat(MAX_SVG_BYTES));
        assert_eq!(refused(&big).reason, Reason::RawTooLarge);
        let r = render(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0], 2000).unwrap_err();
        assert!(r.message.contains("svgz"), "{}", r.message);
        assert!(render(&[0xff, 0xfe, 0], 2000).unwrap_err().message.contains("UTF-8"));
        assert!(refused("<svg><g></svg>").message.contains("malformed"));
    }

    #[test]
    fn billion_laughs_is_refused() {
        within(HOSTILE, "billion_laughs_is_refused", billion_laughs_is_refused_body)
    }

    fn billion_laughs_is_refused_body() {
        let mut dtd = String::from(r#"<!ENTITY a0 "lol">"#);
        for i in 1..10 {
            let p = format!("&a{};", i - 1);
            dtd += &format!(r#"<!ENTITY a{i} "{}">"#, p.repeat(10));
        }
        let svg = format!(
            r#"<?xml version="1.0"?><!DOCTYPE svg [{dtd}]><svg xmlns="http://www.w3.org/2000/svg"><text>&a9;</text></svg>"#
        );
        let r = refused(&svg);
        assert!(r.reason == Reason::DimensionsTooLarge || r.reason == Reason::Undecodable, "{r:?}");
    }

    #[test]
    fn use_bombs_and_self_reference_are_refused_or_dropped() {
        within(
            HOSTILE,
            "use_bombs_and_self_reference_are_refused_or_dropped",
            use_bombs_and_self_reference_are_refused_or_dropped_body,
        )
    }

    fn use_bombs_and_self_reference_are_refused_or_dropped_body() {
        // Each level uses the one below ten times: 10^8 elements once expanded.
        let mut body = String::from(r#"<defs><rect id="l0" width="1" height="1"/>"#);
        for i in 1..9 {
            body += &format!(r#"<g id="l{i}">"#);
            for _ in 0..10 {
                body += &format!(r##"<use href="#l{}"/>"##, i - 1);
            }
            body += "</g>";
        }
        body += r##"</defs><use href="#l8"/>"##;
        let r = refused(&doc("", &body));
        assert_eq!(r.reason, Reason::DimensionsTooLarge);
        assert!(r.message.contains("expands"), "{}", r.message);

        // Self and mutual reference: usvg drops the cycle; the rest is drawn.
        let img = ok(&doc(
            r#"width="10" height="10""#,
            r##"<g id="a"><use href="#a"/><use href="#b"/></g><g id="b"><use href="#a"/></g><use id="c" href="#c"/>
               <rect width="10" height="10" fill="red"/>"##,
        ));
        assert_eq!(px(&img, 5, 5), [255, 0, 0, 255]);
    }

    #[test]
    fn marker_bombs_are_refused() {
        within(HOSTILE, "marker_bombs_are_refused", marker_bombs_are_refused_body)
    }

    fn marker_bombs_are_refused_body() {
        let mut marker = String::new();
        for i in 0..200 {
            marker += &format!(r#"<rect x="{i}" width="1" height="1"/>"#);
        }
        let points = "1 1 ".repeat(20_000);
        let r = refused(&doc(
            "",
            &format!(
                r#"<marker id="m">{marker}</marker><polyline points="{points}" marker-mid="url(#m)" stroke="black"/>"#
            ),
        ));
        assert!(r.message.contains("expands"), "{}", r.message);
    }

    #[test]
    fn text_and_css_bombs_are_refused() {
        within(HOSTILE, "text_and_css_bombs_are_refused", text_and_css_bombs_are_refused_body)
    }

    fn text_and_css_bombs_are_refused_body() {
        let r = refused(&doc("", &format!("<text>{}</text>", "x".repeat(300_000))));
        assert!(r.message.contains("characters of text"), "{}", r.message);
        let css = ".a{fill:red}".repeat(2_000);
        let rects = "<rect/>".repeat(30_000);
        let r = refused(&doc("", &format!("<style>{css}</style>{rects}")));
        assert!(r.message.contains("CSS rules"), "{}", r.message);
    }

    #[test]
    fn huge_filters_are_refused() {
        within(HOSTILE, "huge_filters_are_refused", huge_filters_are_refused_body)
    }

    fn huge_filters_are_refused_body() {
        let full = r#"<rect width="2000" height="2000" fill="red" filter="url(#f)"/>"#;
        let convolve =
            format!(r#"<filter id="f"><feConvolveMatrix order="30" kernelMatrix="{}"/></filter>"#, "1 ".repeat(900));
        let cases = [
            // A morphology with a radius the size of the canvas: w·h·r² operations.
            (r#"<filter id="f"><feMorphology radius="1000000"/></filter>"#, "feMorphology"),
            (r#"<filter id="f"><feMorphology radius="40"/></filter>"#, "feMorphology"),
            (r#"<filter id="f"><feTurbulence baseFrequency="0.05" numOctaves="1000000"/></filter>"#, "feTurbulence"),
            (&convolve, "feConvolveMatrix"),
            // A filter region of 1e6 × 1e6: a layer of 5 × 5 canvases.
            (
                r#"<filter id="f" filterUnits="userSpaceOnUse" x="-500000" y="-500000" width="1000000" height="1000000"><feOffset dx="1"/></filter>"#,
                "at once",
            ),
        ];
        for (filter, words) in cases {
            let r = refused(&doc(r#"width="2000" height="2000""#, &format!("<defs>{filter}</defs>{full}")));
            assert_eq!(r.reason, Reason::DimensionsTooLarge, "{filter}: {}", r.message);
            assert!(r.message.contains(words), "{filter}: {}", r.message);
        }
        // Many stacked filters.
        let mut body = String::from(r#"<defs><filter id="f"><feGaussianBlur stdDeviation="3"/></filter></defs>"#);
        for _ in 0..40 {
            body += r#"<g filter="url(#f)">"#;
        }
        body += r#"<rect width="2000" height="2000" fill="red"/>"#;
        body += &"</g>".repeat(40);
        let r = refused(&doc(r#"width="2000" height="2000""#, &body));
        assert_eq!(r.reason, Reason::DimensionsTooLarge);
    }

    #[test]
    fn a_huge_blur_is_refused_and_an_ordinary_one_drawn() {
        within(
            HOSTILE,
            "a_huge_blur_is_refused_and_an_ordinary_one_drawn",
            a_huge_blur_is_refused_and_an_ordinary_one_drawn_body,
        )
    }

    fn a_huge_blur_is_refused_and_an_ordinary_one_drawn_body() {
        for filter in [
            r#"<feGaussianBlur stdDeviation="1e9"/>"#,
            r#"<feGaussianBlur stdDeviation="1 1e30"/>"#,
            r#"<feDropShadow stdDeviation="1e9"/>"#,
        ] {
            let svg = doc(
                r#"width="2000" height="2000""#,
                &format!(
                    r#"<filter id="f">{filter}</filter><rect width="2000" height="2000" fill="red" filter="url(#f)"/>"#
                ),
            );
            let r = refused(&svg);
            assert!(r.message.contains("blur's standard deviation"), "{filter}: {}", r.message);
        }
        let img = ok(&doc(
            r#"width="100" height="100""#,
            r#"<filter id="f"><feGaussianBlur stdDeviation="4"/></filter><rect x="25" y="25" width="50" height="50" fill="red" filter="url(#f)"/>"#,
        ));
        // Soft edges: some pixels partly covered around the square's corner.
        assert!(img.pixels().any(|p| (20..230).contains(&p.0[3])));
    }

    #[test]
    fn patterns_with_tiny_or_huge_tiles() {
        within(HOSTILE, "patterns_with_tiny_or_huge_tiles", patterns_with_tiny_or_huge_tiles_body)
    }

    fn patterns_with_tiny_or_huge_tiles_body() {
        // A tile of 0.001 units over the canvas: rendered (tiles are a shader, not a loop).
        let tiny = doc(
            r#"width="2000" height="2000""#,
            r#"<pattern id="p" width="0.001" height="0.001" patternUnits="userSpaceOnUse"><rect width="0.0005" height="0.0005"/></pattern>
               <rect width="2000" height="2000" fill="url(#p)"/>"#,
        );
        let _ = render(tiny.as_bytes(), 2000);
        // A tile of 1e6 × 1e6 pixels: refused before it is allocated.
        let huge = doc(
            r#"width="2000" height="2000""#,
            r#"<pattern id="p" width="1000000" height="1000000" patternUnits="userSpaceOnUse"><rect width="10" height="10"/></pattern>
               <rect width="2000" height="2000" fill="url(#p)"/>"#,
        );
        assert!(refused(&huge).message.contains("pattern"));
        // A pattern filling 2,000 paths, each a full-canvas tile render.
        let many = doc(
            r#"width="2000" height="2000""#,
            &format!(
                r#"<pattern id="p" width="2000" height="2000" patternUnits="userSpaceOnUse"><rect width="10" height="10"/></pattern>{}"#,
                r#"<rect width="2000" height="2000" fill="url(#p)"/>"#.repeat(2_000)
            ),
        );
        assert!(refused(&many).message.contains("pixel operations"));
    }

    #[test]
    fn huge_strokes_long_paths_and_tiny_dashes() {
        within(HOSTILE, "huge_strokes_long_paths_and_tiny_dashes", huge_strokes_long_paths_and_tiny_dashes_body)
    }

    fn huge_strokes_long_paths_and_tiny_dashes_body() {
        // A huge stroke width: drawn (clipped to the canvas).
        let img = ok(&doc(
            r#"width="100" height="100""#,
            r#"<line x1="0" y1="50" x2="100" y2="50" stroke="red" stroke-width="1e30"/>"#,
        ));
        assert_eq!(img.dimensions(), (512, 512));
        // 2.1 million segments, filled and stroked (4.2 million drawn), within the byte cap and a
        // unit of the origin.
        let r =
            refused(&doc("", &format!(r#"<path d="M0 0{}" fill="black" stroke="black"/>"#, "h1h-1".repeat(1_050_000))));
        assert!(r.message.contains("segments"), "{}", r.message);
        // A control point 6e36 units out (a fuzzing find: tiny-skia's anti-aliased scan converter
        // panicked on it) is refused before drawing; one a little outside the canvas is drawn.
        let r = refused(&doc(
            r#"width="256" height="256""#,
            r#"<path d="M0,-110 C60,-110 11,-60 110,0 C-6055555555555555555555555555555555555,110 -110,60 -110,0Z" fill="red"/>"#,
        ));
        assert!(r.message.contains("a path reaches") && r.message.contains("rasteriser"), "{}", r.message);
        ok(&doc(r#"width="256" height="256""#, r#"<path d="M-5000,-5000 C9000,0 0,9000 200,200Z" fill="red"/>"#));
        // Ten million are over the byte cap.
        assert_eq!(
            refused(&doc("", &format!(r#"<path d="M0 0{}"/>"#, "h1".repeat(10_000_000)))).reason,
            Reason::RawTooLarge
        );
        // A dash of 0.0001 units along 1000 units: 10^7 dashes.
        let r = refused(&doc("", r#"<path d="M0 0h1000" stroke="black" stroke-dasharray="0.0001"/>"#));
        assert!(r.message.contains("dashes"), "{}", r.message);
    }

    #[test]
    fn nesting_is_counted_along_children_and_references() {
        within(
            HOSTILE,
            "nesting_is_counted_along_children_and_references",
            nesting_is_counted_along_children_and_references_body,
        )
    }

    fn nesting_is_counted_along_children_and_references_body() {
        let nested = |open: &str, levels: usize| {
            doc(
                r#"width="10" height="10""#,
                &format!("{}<rect width=\"1\" height=\"1\"/>{}", open.repeat(levels), "</g>".repeat(levels)),
            )
        };
        // The root, 198 groups and the rectangle: 200, the limit.
        ok(&nested("<g>", 198));
        let r = refused(&nested("<g>", 199));
        assert_eq!(r.reason, Reason::DimensionsTooLarge);
        assert!(r.message.contains("nest 201 deep"), "{}", r.message);
        assert!(refused(&nested(r#"<g opacity=".5">"#, 400)).message.contains("nest"));
        // A chain of patterns, each filling a rectangle with the one before: two per level.
        let chain = |levels: usize| {
            let mut body =
                String::from(r#"<pattern id="p0" width="1" height="1"><rect width="1" height="1"/></pattern>"#);
            for i in 1..levels {
                body += &format!(
                    r#"<pattern id="p{i}" width="1" height="1"><rect width="1" height="1" fill="url(#p{})"/></pattern>"#,
                    i - 1
                );
            }
            doc(
                r#"width="10" height="10""#,
                &format!(r#"{body}<rect width="10" height="10" fill="url('#p{}')"/>"#, levels - 1),
            )
        };
        ok(&chain(99));
        assert!(refused(&chain(100)).message.contains("nest 202 deep"));
        // The same chain written in a stylesheet counts each target's depth.
        let mut body = String::from("<style>");
        for i in 1..150 {
            body += &format!(".c{i} {{ fill: url(#p{}) }} ", i - 1);
        }
        body += "</style>";
        for i in 0..150 {
            body += &format!(
                r#"<pattern id="p{i}" width="1" height="1"><rect class="c{i}" width="1" height="1"/></pattern>"#
            );
        }
        assert!(refused(&doc("", &body)).message.contains("nest"));
        // A reference cycle ends (usvg drops the closing link).
        ok(&doc(
            "",
            r##"<pattern id="a" width="1" height="1"><rect width="1" height="1" fill="url(#b)"/></pattern>
               <pattern id="b" width="1" height="1"><rect width="1" height="1" fill="url(#a)"/></pattern>
               <rect width="10" height="10" fill="url(#a)"/>"##,
        ));
    }

    #[test]
    fn long_text_runs_and_outlines_are_refused() {
        within(HOSTILE, "long_text_runs_and_outlines_are_refused", long_text_runs_and_outlines_are_refused_body)
    }

    fn long_text_runs_and_outlines_are_refused_body() {
        let r = refused(&doc("", &format!("<text>{}</text>", "x".repeat(30_000))));
        assert!(r.message.contains("text runs unbroken"), "{}", r.message);
        // The same characters broken into positioned runs: laid out.
        let runs: String = (0..300).map(|i| format!(r#"<tspan x="0" y="{i}">{}</tspan>"#, "x".repeat(100))).collect();
        ok(&doc("", &format!("<text font-size=\"1\">{runs}</text>")));
        assert_eq!(
            text_run_squares(
                roxmltree::Document::parse("<text>ab<tspan x=\"1\">cde</tspan>f<textPath>gh</textPath></text>")
                    .unwrap()
                    .root_element()
            ),
            4 + 16 + 4
        );
        let r = refused(&doc(
            "",
            &format!(r#"<path d="M50 50{}" fill="none" stroke="black"/>"#, " c1 1 2 2 0 0".repeat(350_000)),
        ));
        assert!(r.message.contains("outline work"), "{}", r.message);
    }

    #[test]
    fn many_full_canvas_fills_are_refused() {
        within(HOSTILE, "many_full_canvas_fills_are_refused", many_full_canvas_fills_are_refused_body)
    }

    fn many_full_canvas_fills_are_refused_body() {
        let rects = r#"<rect width="2000" height="2000" fill="red"/>"#.repeat(1_000);
        let r = refused(&doc(r#"width="2000" height="2000""#, &rects));
        assert!(r.message.contains("pixel operations"), "{}", r.message);
        let nodes = "<rect width=\"1\" height=\"1\"/>".repeat(MAX_EXPANDED_ELEMENTS as usize + 10);
        assert!(refused(&doc("", &nodes)).message.contains("expands"));
    }

    #[test]
    #[ignore = "a measurement: cargo test --release -p mediagate-guest --features convert svg::tests::time -- --ignored --nocapture"]
    fn time_a_typical_diagram() {
        let mut body = String::from(
            r#"<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" orient="auto">
               <path d="M0 0L10 5L0 10z"/></marker>
               <linearGradient id="g" x2="0" y2="1"><stop offset="0" stop-color="lavender"/><stop offset="1" stop-color="lightsteelblue"/></linearGradient>
               <filter id="s"><feDropShadow dx="2" dy="2" stdDeviation="2"/></filter></defs>
               <rect width="1200" height="800" fill="white"/>"#,
        );
        for i in 0..24 {
            let (x, y) = (40 + (i % 6) * 190, 40 + (i / 6) * 190);
            body += &format!(
                r#"<g filter="url(#s)"><rect x="{x}" y="{y}" width="150" height="80" rx="8" fill="url(#g)" stroke="navy"/></g>
                   <text x="{}" y="{}" font-family="Helvetica" font-size="16" text-anchor="middle">Service {i}</text>
                   <path d="M{} {} C{} {} {} {} {} {}" stroke="navy" fill="none" marker-end="url(#arrow)"/>"#,
                x + 75,
                y + 45,
                x + 150,
                y + 40,
                x + 170,
                y + 40,
                x + 170,
                y + 120,
                x + 190,
                y + 120
            );
        }
        let svg = doc(r#"width="1200" height="800" viewBox="0 0 1200 800""#, &body);
        let start = std::time::Instant::now();
        let runs = 10;
        for _ in 0..runs {
            let img = render(svg.as_bytes(), 2000).unwrap();
            assert_eq!(img.dimensions(), (1200, 800));
        }
        println!("{} bytes of SVG → 1200×800: {:?} per render", svg.len(), start.elapsed() / runs);
    }
}
