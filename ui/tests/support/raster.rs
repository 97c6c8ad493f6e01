//! A small software rasterizer for `egui_kittest` snapshots.
//!
//! `egui_kittest` renders snapshots through a [`TestRenderer`]; its own is wgpu, which needs a GPU
//! adapter that CI machines (and this project's) do not have. This one runs on the CPU and is
//! deterministic: egui's shapes are tessellated into meshes, and each triangle is filled with
//! fixed-point edge functions (1/256 pixel) sampled at pixel centres, with a top-left rule so two
//! triangles that share an edge never both paint a pixel on it (no seams, no double blending).
//! Vertex colours and texture coordinates are interpolated barycentrically, the texture (egui's
//! font atlas, or any image) is sampled bilinearly or nearest as its options ask, and the
//! premultiplied result is blended "over" an opaque background, all in egui's gamma space, as
//! egui's own renderers do on a non-sRGB framebuffer. Paint callbacks are skipped.

use std::collections::HashMap;

use eframe::egui::{
    self, epaint::Primitive, Color32, ImageData, TextureFilter, TextureId, TexturesDelta,
};
use egui_kittest::TestRenderer;

/// Sub-pixel precision of vertex positions (8 bits, as GPUs commonly use).
const SUBPIXEL: f32 = 256.0;

/// One texture: premultiplied sRGB texels, row by row.
struct Texture {
    size: [usize; 2],
    texels: Vec<Color32>,
    filter: TextureFilter,
}

impl Texture {
    fn texel(&self, x: isize, y: isize) -> [f32; 4] {
        let clamp = |v: isize, n: usize| v.clamp(0, n.saturating_sub(1) as isize) as usize;
        let (x, y) = (clamp(x, self.size[0]), clamp(y, self.size[1]));
        self.texels[y * self.size[0] + x]
            .to_array()
            .map(|c| f32::from(c) / 255.0)
    }

    /// Samples at normalised `uv` (clamped to the edge).
    fn sample(&self, uv: [f32; 2]) -> [f32; 4] {
        if self.texels.is_empty() {
            return [1.0; 4];
        }
        let x = uv[0] * self.size[0] as f32 - 0.5;
        let y = uv[1] * self.size[1] as f32 - 0.5;
        if self.filter == TextureFilter::Nearest {
            return self.texel(x.round() as isize, y.round() as isize);
        }
        let (x0, y0) = (x.floor(), y.floor());
        let (fx, fy) = (x - x0, y - y0);
        let (x0, y0) = (x0 as isize, y0 as isize);
        let (a, b) = (self.texel(x0, y0), self.texel(x0 + 1, y0));
        let (c, d) = (self.texel(x0, y0 + 1), self.texel(x0 + 1, y0 + 1));
        std::array::from_fn(|i| {
            let top = a[i] + (b[i] - a[i]) * fx;
            let bottom = c[i] + (d[i] - c[i]) * fx;
            top + (bottom - top) * fy
        })
    }
}

/// The CPU renderer: textures kept from the deltas, frames drawn on an opaque background.
pub struct Raster {
    textures: HashMap<TextureId, Texture>,
    /// Frees that arrived with the last delta: egui frees a texture after painting its frame.
    pending_free: Vec<TextureId>,
    background: Color32,
}

impl Raster {
    pub fn new(background: Color32) -> Self {
        Self {
            textures: HashMap::new(),
            pending_free: Vec::new(),
            background,
        }
    }
}

impl TestRenderer for Raster {
    fn handle_delta(&mut self, delta: &mut TexturesDelta) {
        for id in self.pending_free.drain(..) {
            self.textures.remove(&id);
        }
        for (id, updates) in std::mem::take(&mut delta.set) {
            for update in updates {
                let ImageData::Color(image) = &update.image;
                match update.pos {
                    None => {
                        self.textures.insert(
                            id,
                            Texture {
                                size: image.size,
                                texels: image.pixels.clone(),
                                filter: update.options.magnification,
                            },
                        );
                    }
                    Some([x, y]) => {
                        let Some(tex) = self.textures.get_mut(&id) else {
                            continue; // a patch for a texture never set: nothing to patch
                        };
                        let [w, h] = image.size;
                        for row in 0..h.min(tex.size[1].saturating_sub(y)) {
                            let n = w.min(tex.size[0].saturating_sub(x));
                            let dst = (y + row) * tex.size[0] + x;
                            tex.texels[dst..dst + n]
                                .copy_from_slice(&image.pixels[row * w..row * w + n]);
                        }
                    }
                }
            }
        }
        self.pending_free.extend(delta.free.drain());
    }

    fn render(
        &mut self,
        ctx: &egui::Context,
        output: &egui::FullOutput,
    ) -> Result<image::RgbaImage, String> {
        let ppp = output.pixels_per_point;
        let size = ctx.content_rect().size() * ppp;
        let mut canvas = Canvas::new(
            size.x.round() as usize,
            size.y.round() as usize,
            self.background,
        );
        for clipped in ctx.tessellate(output.shapes.clone(), ppp) {
            let Primitive::Mesh(mesh) = &clipped.primitive else {
                continue; // paint callbacks need a real GPU backend
            };
            let texture = self
                .textures
                .get(&mesh.texture_id)
                .ok_or_else(|| format!("mesh uses texture {:?}, never set", mesh.texture_id))?;
            let clip = canvas.clip(clipped.clip_rect, ppp);
            for tri in mesh.indices.chunks_exact(3) {
                let v = [0, 1, 2].map(|i| &mesh.vertices[tri[i] as usize]);
                canvas.triangle(v, ppp, clip, texture);
            }
        }
        Ok(canvas.into_image())
    }
}

/// The frame being drawn: premultiplied gamma-space RGBA in 0..=1, opaque.
struct Canvas {
    width: usize,
    height: usize,
    pixels: Vec<[f32; 4]>,
}

/// Twice the signed area of `a b c` (fixed point), positive when `c` is right of `a → b`.
fn edge(a: [i64; 2], b: [i64; 2], c: [i64; 2]) -> i64 {
    (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
}

/// Whether a pixel centre exactly on edge `a → b` belongs to this triangle. An edge and its
/// reverse never agree, so of two triangles sharing an edge exactly one paints it.
fn owns(a: [i64; 2], b: [i64; 2]) -> bool {
    let d = [b[0] - a[0], b[1] - a[1]];
    d[1] < 0 || (d[1] == 0 && d[0] > 0)
}

impl Canvas {
    fn new(width: usize, height: usize, background: Color32) -> Self {
        let bg = background
            .to_opaque()
            .to_array()
            .map(|c| f32::from(c) / 255.0);
        Self {
            width,
            height,
            pixels: vec![bg; width * height],
        }
    }

    /// A clip rectangle in points as whole pixels `[x0, y0, x1, y1)`, within the canvas.
    fn clip(&self, rect: egui::Rect, ppp: f32) -> [usize; 4] {
        let px = |v: f32, max: usize| ((v * ppp).round().max(0.0) as usize).min(max);
        [
            px(rect.min.x, self.width),
            px(rect.min.y, self.height),
            px(rect.max.x, self.width),
            px(rect.max.y, self.height),
        ]
    }

    fn triangle(
        &mut self,
        v: [&egui::epaint::Vertex; 3],
        ppp: f32,
        clip: [usize; 4],
        tex: &Texture,
    ) {
        let fixed = |p: egui::Pos2| [p.x, p.y].map(|c| (c * ppp * SUBPIXEL).round() as i64);
        let mut p = v.map(|v| fixed(v.pos));
        let mut v = v;
        let mut area = edge(p[0], p[1], p[2]);
        if area == 0 {
            return;
        }
        if area < 0 {
            // egui's winding is not consistent: make every triangle the same way round.
            p.swap(1, 2);
            v.swap(1, 2);
            area = -area;
        }
        let sub = SUBPIXEL as i64;
        let span = |axis: usize, lo: usize, hi: usize| {
            let min = p.iter().map(|q| q[axis]).min().unwrap_or(0).div_euclid(sub);
            let max = (p.iter().map(|q| q[axis]).max().unwrap_or(0) + sub - 1).div_euclid(sub);
            (
                min.max(lo as i64) as usize,
                max.clamp(0, hi as i64) as usize,
            )
        };
        let (x0, x1) = span(0, clip[0], clip[2]);
        let (y0, y1) = span(1, clip[1], clip[3]);
        let edges = [(1, 2), (2, 0), (0, 1)]; // edge i is opposite vertex i
        let owned = edges.map(|(a, b)| owns(p[a], p[b]));
        let colour = v.map(|v| v.color.to_array().map(|c| f32::from(c) / 255.0));
        for y in y0..y1 {
            for x in x0..x1 {
                let c = [x as i64 * sub + sub / 2, y as i64 * sub + sub / 2];
                let w = edges.map(|(a, b)| edge(p[a], p[b], c));
                if (0..3).any(|i| w[i] < 0 || (w[i] == 0 && !owned[i])) {
                    continue;
                }
                let l = w.map(|w| w as f32 / area as f32);
                let uv = [0, 1].map(|k| {
                    l[0] * [v[0].uv.x, v[0].uv.y][k]
                        + l[1] * [v[1].uv.x, v[1].uv.y][k]
                        + l[2] * [v[2].uv.x, v[2].uv.y][k]
                });
                let texel = tex.sample(uv);
                let src: [f32; 4] = std::array::from_fn(|i| {
                    (l[0] * colour[0][i] + l[1] * colour[1][i] + l[2] * colour[2][i]) * texel[i]
                });
                let dst = &mut self.pixels[y * self.width + x];
                for i in 0..4 {
                    dst[i] = src[i] + dst[i] * (1.0 - src[3]);
                }
            }
        }
    }

    fn into_image(self) -> image::RgbaImage {
        let mut bytes = Vec::with_capacity(self.pixels.len() * 4);
        for px in &self.pixels {
            bytes.extend(px.map(|c| (c.clamp(0.0, 1.0) * 255.0).round() as u8));
            bytes.pop();
            bytes.push(255);
        }
        image::RgbaImage::from_raw(self.width as u32, self.height as u32, bytes)
            .expect("width × height × 4 bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use egui::epaint::{ClippedShape, Shape};
    use egui::{pos2, Rect};

    /// A context whose font atlas (with `text` laid out in it) is handed to `raster`, and no
    /// anti-aliasing feather; returns the laid-out text and an output with no shapes.
    fn context(
        raster: &mut Raster,
        text: &str,
    ) -> (egui::Context, Arc<egui::Galley>, egui::FullOutput) {
        let ctx = egui::Context::default();
        ctx.tessellation_options_mut(|o| o.feathering = false);
        let input = egui::RawInput {
            screen_rect: Some(Rect::from_min_size(pos2(0.0, 0.0), egui::vec2(16.0, 12.0))),
            ..Default::default()
        };
        let mut galley = None;
        let mut output = ctx.run_ui(input, |ui| {
            let font = egui::FontId::monospace(10.0);
            galley = Some(
                ui.painter()
                    .layout_no_wrap(text.into(), font, Color32::WHITE),
            );
        });
        raster.handle_delta(&mut output.textures_delta);
        output.shapes.clear();
        (ctx, galley.expect("laid out in the frame"), output)
    }

    fn rect(clip: Rect, min: (f32, f32), max: (f32, f32), colour: Color32) -> ClippedShape {
        ClippedShape::new(
            clip,
            Shape::rect_filled(
                Rect::from_min_max(pos2(min.0, min.1), pos2(max.0, max.1)),
                0.0,
                colour,
            ),
        )
    }

    #[test]
    fn a_rect_fills_exactly_its_pixels_within_the_clip_and_blends_once() {
        let mut raster = Raster::new(Color32::BLACK);
        let (ctx, _, mut output) = context(&mut raster, "");
        let everywhere = Rect::EVERYTHING;
        // An opaque red rect on whole pixels: x 2..6, y 3..5.
        output
            .shapes
            .push(rect(everywhere, (2.0, 3.0), (6.0, 5.0), Color32::RED));
        // Half-transparent blue over 8×4 pixels, clipped to x < 12: its two triangles share the
        // diagonal, which passes through pixel centres; blended twice it would show a line.
        let blue = Color32::from_rgba_premultiplied(0, 0, 128, 128);
        let clip = Rect::from_min_max(pos2(0.0, 0.0), pos2(12.0, 12.0));
        output
            .shapes
            .push(rect(clip, (8.0, 4.0), (16.0, 8.0), blue));
        let image = raster.render(&ctx, &output).expect("renders");
        assert_eq!(image.dimensions(), (16, 12));
        for (x, y, px) in image.enumerate_pixels() {
            let red = (2..6).contains(&x) && (3..5).contains(&y);
            let blue = (8..12).contains(&x) && (4..8).contains(&y);
            let want = match (red, blue) {
                (true, _) => [255, 0, 0, 255],
                (_, true) => [0, 0, 128, 255],
                _ => [0, 0, 0, 255],
            };
            assert_eq!(px.0, want, "pixel ({x}, {y})");
        }
    }

    #[test]
    fn text_samples_the_font_atlas() {
        let mut raster = Raster::new(Color32::BLACK);
        let (ctx, galley, mut output) = context(&mut raster, "H");
        output.shapes.push(ClippedShape::new(
            Rect::EVERYTHING,
            Shape::galley(pos2(2.0, 0.0), galley, Color32::WHITE),
        ));
        let image = raster.render(&ctx, &output).expect("renders");
        let lit = image.pixels().filter(|p| p.0[0] > 128).count();
        // An "H" at 10 pt: two stems and a bar, some tens of pixels, not a filled quad.
        assert!((10..60).contains(&lit), "{lit} bright pixels");
        assert!(
            image.pixels().all(|p| p.0[0] == p.0[1] && p.0[1] == p.0[2]),
            "grey text"
        );
    }
}
