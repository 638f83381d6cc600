//! The few CSS declarations the exporters keep: colours, weight, style, decoration,
//! alignment, font size and list markers. The sanitizer already wrote every `style` as
//! `name: value; …` with harmless values; anything not understood here is ignored.

use crate::model::Rgb;

/// The declarations of a `style` attribute, names lower-cased, values trimmed.
pub(crate) fn declarations(style: &str) -> impl Iterator<Item = (String, &str)> {
    style.split(';').filter_map(|d| {
        let (name, value) = d.split_once(':')?;
        let value = value.trim();
        let value = value.strip_suffix("!important").map_or(value, str::trim_end);
        Some((name.trim().to_ascii_lowercase(), value))
    })
}

/// A CSS colour: `#rgb`, `#rrggbb` (and their alpha forms), `rgb()`/`rgba()`, `hsl()`/`hsla()`
/// or a named colour. Fully transparent colours and keywords such as `inherit` are `None`.
pub(crate) fn color(value: &str) -> Option<Rgb> {
    let v = value.trim().to_ascii_lowercase();
    if let Some(hex) = v.strip_prefix('#') {
        return hex_color(hex);
    }
    if let Some((func, args)) = v.split_once('(') {
        let args = args.strip_suffix(')')?;
        let parts: Vec<&str> = args.split([',', ' ', '/']).map(str::trim).filter(|p| !p.is_empty()).collect();
        if parts.len() < 3 {
            return None;
        }
        if let Some(alpha) = parts.get(3) {
            if alpha_of(alpha)? <= 0.0 {
                return None;
            }
        }
        return match func.trim() {
            "rgb" | "rgba" => {
                let c = |p: &str| -> Option<u8> {
                    let x = match p.strip_suffix('%') {
                        Some(pc) => pc.parse::<f32>().ok()? * 2.55,
                        None => p.parse::<f32>().ok()?,
                    };
                    Some(x.clamp(0.0, 255.0).round() as u8)
                };
                Some(Rgb(c(parts[0])?, c(parts[1])?, c(parts[2])?))
            }
            "hsl" | "hsla" => {
                let h = parts[0].trim_end_matches("deg").parse::<f32>().ok()?;
                let s = parts[1].strip_suffix('%')?.parse::<f32>().ok()? / 100.0;
                let l = parts[2].strip_suffix('%')?.parse::<f32>().ok()? / 100.0;
                Some(hsl(h, s.clamp(0.0, 1.0), l.clamp(0.0, 1.0)))
            }
            _ => None,
        };
    }
    if v == "transparent" {
        return None;
    }
    named(&v)
}

fn alpha_of(p: &str) -> Option<f32> {
    match p.strip_suffix('%') {
        Some(pc) => Some(pc.parse::<f32>().ok()? / 100.0),
        None => p.parse::<f32>().ok(),
    }
}

fn hex_color(hex: &str) -> Option<Rgb> {
    if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let digit = |i: usize| u8::from_str_radix(&hex[i..i + 1], 16).ok();
    let pair = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).ok();
    match hex.len() {
        3 | 4 => {
            if hex.len() == 4 && digit(3)? == 0 {
                return None;
            }
            Some(Rgb(digit(0)? * 17, digit(1)? * 17, digit(2)? * 17))
        }
        6 | 8 => {
            if hex.len() == 8 && pair(6)? == 0 {
                return None;
            }
            Some(Rgb(pair(0)?, pair(2)?, pair(4)?))
        }
        _ => None,
    }
}

fn hsl(h: f32, s: f32, l: f32) -> Rgb {
    let h = h.rem_euclid(360.0) / 360.0;
    let q = if l < 0.5 { l * (1.0 + s) } else { l + s - l * s };
    let p = 2.0 * l - q;
    let channel = |t: f32| {
        let t = t.rem_euclid(1.0);
        let v = if t < 1.0 / 6.0 {
            p + (q - p) * 6.0 * t
        } else if t < 0.5 {
            q
        } else if t < 2.0 / 3.0 {
            p + (q - p) * (2.0 / 3.0 - t) * 6.0
        } else {
            p
        };
        (v * 255.0).round().clamp(0.0, 255.0) as u8
    };
    Rgb(channel(h + 1.0 / 3.0), channel(h), channel(h - 1.0 / 3.0))
}

/// The colour of a `background` shorthand (its first colour-like token).
pub(crate) fn background_color(value: &str) -> Option<Rgb> {
    let mut depth = 0usize;
    let mut start = 0;
    let mut tokens = Vec::new();
    for (i, c) in value.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ' ' if depth == 0 => {
                tokens.push(&value[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    tokens.push(&value[start..]);
    tokens.into_iter().filter(|t| !t.is_empty()).find_map(color)
}

/// A `font-size` in points (`pt`, `px`, or a keyword), within 1..=400.
pub(crate) fn font_size_pt(value: &str) -> Option<f32> {
    let v = value.trim().to_ascii_lowercase();
    let pt = if let Some(n) = v.strip_suffix("pt") {
        n.trim().parse::<f32>().ok()?
    } else if let Some(n) = v.strip_suffix("px") {
        n.trim().parse::<f32>().ok()? * 0.75
    } else {
        match v.as_str() {
            "xx-small" => 7.0,
            "x-small" => 7.5,
            "small" => 10.0,
            "medium" => 12.0,
            "large" => 13.5,
            "x-large" => 18.0,
            "xx-large" => 24.0,
            _ => return None,
        }
    };
    (pt.is_finite() && pt > 0.0).then_some(pt.clamp(1.0, 400.0))
}

/// Named colours of CSS Color 4.
fn named(name: &str) -> Option<Rgb> {
    let hex: u32 = match name {
        "aliceblue" => 0xf0f8ff,
        "antiquewhite" => 0xfaebd7,
        "aqua" | "cyan" => 0x00ffff,
        "aquamarine" => 0x7fffd4,
        "azure" => 0xf0ffff,
        "beige" => 0xf5f5dc,
        "bisque" => 0xffe4c4,
        "black" => 0x000000,
        "blanchedalmond" => 0xffebcd,
        "blue" => 0x0000ff,
        "blueviolet" => 0x8a2be2,
        "brown" => 0xa52a2a,
        "burlywood" => 0xdeb887,
        "cadetblue" => 0x5f9ea0,
        "chartreuse" => 0x7fff00,
        "chocolate" => 0xd2691e,
        "coral" => 0xff7f50,
        "cornflowerblue" => 0x6495ed,
        "cornsilk" => 0xfff8dc,
        "crimson" => 0xdc143c,
        "darkblue" => 0x00008b,
        "darkcyan" => 0x008b8b,
        "darkgoldenrod" => 0xb8860b,
        "darkgray" | "darkgrey" => 0xa9a9a9,
        "darkgreen" => 0x006400,
        "darkkhaki" => 0xbdb76b,
        "darkmagenta" => 0x8b008b,
        "darkolivegreen" => 0x556b2f,
        "darkorange" => 0xff8c00,
        "darkorchid" => 0x9932cc,
        "darkred" => 0x8b0000,
        "darksalmon" => 0xe9967a,
        "darkseagreen" => 0x8fbc8f,
        "darkslateblue" => 0x483d8b,
        "darkslategray" | "darkslategrey" => 0x2f4f4f,
        "darkturquoise" => 0x00ced1,
        "darkviolet" => 0x9400d3,
        "deeppink" => 0xff1493,
        "deepskyblue" => 0x00bfff,
        "dimgray" | "dimgrey" => 0x696969,
        "dodgerblue" => 0x1e90ff,
        "firebrick" => 0xb22222,
        "floralwhite" => 0xfffaf0,
        "forestgreen" => 0x228b22,
        "fuchsia" | "magenta" => 0xff00ff,
        "gainsboro" => 0xdcdcdc,
        "ghostwhite" => 0xf8f8ff,
        "gold" => 0xffd700,
        "goldenrod" => 0xdaa520,
        "gray" | "grey" => 0x808080,
        "green" => 0x008000,
        "greenyellow" => 0xadff2f,
        "honeydew" => 0xf0fff0,
        "hotpink" => 0xff69b4,
        "indianred" => 0xcd5c5c,
        "indigo" => 0x4b0082,
        "ivory" => 0xfffff0,
        "khaki" => 0xf0e68c,
        "lavender" => 0xe6e6fa,
        "lavenderblush" => 0xfff0f5,
        "lawngreen" => 0x7cfc00,
        "lemonchiffon" => 0xfffacd,
        "lightblue" => 0xadd8e6,
        "lightcoral" => 0xf08080,
        "lightcyan" => 0xe0ffff,
        "lightgoldenrodyellow" => 0xfafad2,
        "lightgray" | "lightgrey" => 0xd3d3d3,
        "lightgreen" => 0x90ee90,
        "lightpink" => 0xffb6c1,
        "lightsalmon" => 0xffa07a,
        "lightseagreen" => 0x20b2aa,
        "lightskyblue" => 0x87cefa,
        "lightslategray" | "lightslategrey" => 0x778899,
        "lightsteelblue" => 0xb0c4de,
        "lightyellow" => 0xffffe0,
        "lime" => 0x00ff00,
        "limegreen" => 0x32cd32,
        "linen" => 0xfaf0e6,
        "maroon" => 0x800000,
        "mediumaquamarine" => 0x66cdaa,
        "mediumblue" => 0x0000cd,
        "mediumorchid" => 0xba55d3,
        "mediumpurple" => 0x9370db,
        "mediumseagreen" => 0x3cb371,
        "mediumslateblue" => 0x7b68ee,
        "mediumspringgreen" => 0x00fa9a,
        "mediumturquoise" => 0x48d1cc,
        "mediumvioletred" => 0xc71585,
        "midnightblue" => 0x191970,
        "mintcream" => 0xf5fffa,
        "mistyrose" => 0xffe4e1,
        "moccasin" => 0xffe4b5,
        "navajowhite" => 0xffdead,
        "navy" => 0x000080,
        "oldlace" => 0xfdf5e6,
        "olive" => 0x808000,
        "olivedrab" => 0x6b8e23,
        "orange" => 0xffa500,
        "orangered" => 0xff4500,
        "orchid" => 0xda70d6,
        "palegoldenrod" => 0xeee8aa,
        "palegreen" => 0x98fb98,
        "paleturquoise" => 0xafeeee,
        "palevioletred" => 0xdb7093,
        "papayawhip" => 0xffefd5,
        "peachpuff" => 0xffdab9,
        "peru" => 0xcd853f,
        "pink" => 0xffc0cb,
        "plum" => 0xdda0dd,
        "powderblue" => 0xb0e0e6,
        "purple" => 0x800080,
        "rebeccapurple" => 0x663399,
        "red" => 0xff0000,
        "rosybrown" => 0xbc8f8f,
        "royalblue" => 0x4169e1,
        "saddlebrown" => 0x8b4513,
        "salmon" => 0xfa8072,
        "sandybrown" => 0xf4a460,
        "seagreen" => 0x2e8b57,
        "seashell" => 0xfff5ee,
        "sienna" => 0xa0522d,
        "silver" => 0xc0c0c0,
        "skyblue" => 0x87ceeb,
        "slateblue" => 0x6a5acd,
        "slategray" | "slategrey" => 0x708090,
        "snow" => 0xfffafa,
        "springgreen" => 0x00ff7f,
        "steelblue" => 0x4682b4,
        "tan" => 0xd2b48c,
        "teal" => 0x008080,
        "thistle" => 0xd8bfd8,
        "tomato" => 0xff6347,
        "turquoise" => 0x40e0d0,
        "violet" => 0xee82ee,
        "wheat" => 0xf5deb3,
        "white" => 0xffffff,
        "whitesmoke" => 0xf5f5f5,
        "yellow" => 0xffff00,
        "yellowgreen" => 0x9acd32,
        _ => return None,
    };
    Some(Rgb((hex >> 16) as u8, (hex >> 8) as u8, hex as u8))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours() {
        assert_eq!(color("#ff0000"), Some(Rgb(255, 0, 0)));
        assert_eq!(color("#F00"), Some(Rgb(255, 0, 0)));
        assert_eq!(color("#ff000000"), None);
        assert_eq!(color("Red"), Some(Rgb(255, 0, 0)));
        assert_eq!(color("rgb(0, 128, 255)"), Some(Rgb(0, 128, 255)));
        assert_eq!(color("rgba(0, 128, 255, 0)"), None);
        assert_eq!(color("rgb(100%, 0%, 0%)"), Some(Rgb(255, 0, 0)));
        assert_eq!(color("hsl(120, 100%, 25%)"), Some(Rgb(0, 128, 0)));
        assert_eq!(color("hsla(0, 50%, 50%, .5)"), Some(Rgb(191, 64, 64)));
        assert_eq!(color("inherit"), None);
        assert_eq!(color("#zzzzzz"), None);
        assert_eq!(color("#é"), None);
        assert_eq!(background_color("#ffff00 none"), Some(Rgb(255, 255, 0)));
        assert_eq!(background_color("none rgb(1, 2, 3)"), Some(Rgb(1, 2, 3)));
    }

    #[test]
    fn declarations_and_sizes() {
        let d: Vec<(String, &str)> = declarations("color: #ff0000; FONT-WEIGHT: bold !important;junk").collect();
        assert_eq!(d, [("color".to_string(), "#ff0000"), ("font-weight".to_string(), "bold")]);
        assert_eq!(font_size_pt("16px"), Some(12.0));
        assert_eq!(font_size_pt("14pt"), Some(14.0));
        assert_eq!(font_size_pt("1e9pt"), Some(400.0));
        assert_eq!(font_size_pt("-3pt"), None);
        assert_eq!(font_size_pt("NaNpt"), None);
        assert_eq!(font_size_pt("2em"), None);
    }
}
