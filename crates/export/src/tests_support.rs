//! Fixtures for the unit tests.

/// A 2×1 RGB PNG: a red and a blue pixel.
pub(crate) fn png_2x1() -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut out, 2, 1);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().expect("png header");
        writer.write_image_data(&[255, 0, 0, 0, 0, 255]).expect("png data");
    }
    out
}
