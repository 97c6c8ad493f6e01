//! `ResidualCouplingBlock` (`flow`), run in reverse: from a sample of the prior to the latent
//! the decoder turns into audio.
//!
//! Each coupling layer keeps one half of the channels and shifts the other by a mean predicted
//! from the first half through a `WN` stack (gated dilated convolutions with residual and skip
//! outputs); between layers the channels are reversed (`Flip`). Piper voices are mean-only, so
//! no scale is undone.

use candle_core::{Device, Tensor};

use crate::checkpoint::Checkpoint;
use crate::layers::{flip_channels, split_channels, Conv};
use crate::VitsError;

/// `modules.WN`.
#[derive(Debug, Clone)]
pub struct Wn {
    in_layers: Vec<Conv>,
    res_skip: Vec<Conv>,
    cond: Option<Conv>,
    hidden: usize,
}

impl Wn {
    /// Every convolution of the module, for choosing their CPU kernel.
    pub fn convs_mut(&mut self) -> Vec<&mut Conv> {
        let mut v: Vec<&mut Conv> = self
            .in_layers
            .iter_mut()
            .chain(self.res_skip.iter_mut())
            .collect();
        v.extend(self.cond.as_mut());
        v
    }

    pub fn load(ck: &Checkpoint, name: &str, device: &Device) -> Result<Self, VitsError> {
        let n = ck.count(&format!("{name}.in_layers"));
        let in_layers = (0..n)
            .map(|i| Conv::load(ck, &format!("{name}.in_layers.{i}"), device))
            .collect::<Result<Vec<_>, _>>()?;
        let res_skip = (0..n)
            .map(|i| Conv::load(ck, &format!("{name}.res_skip_layers.{i}"), device))
            .collect::<Result<Vec<_>, _>>()?;
        let hidden = in_layers.first().map_or(0, |c| c.out_channels() / 2);
        if n == 0 || res_skip.last().map(Conv::out_channels) != Some(hidden) {
            return Err(VitsError::Weight {
                name: format!("{name}.res_skip_layers"),
                reason: "layers do not fit a WN stack".to_owned(),
            });
        }
        let cond_name = format!("{name}.cond_layer");
        let cond = if ck.convs.contains_key(&cond_name) {
            Some(Conv::load(ck, &cond_name, device)?)
        } else {
            None
        };
        Ok(Self {
            in_layers,
            res_skip,
            cond,
            hidden,
        })
    }

    pub fn forward(&self, x: &Tensor, g: Option<&Tensor>) -> Result<Tensor, VitsError> {
        let g = match (&self.cond, g) {
            (Some(cond), Some(g)) => Some(cond.forward(g)?),
            _ => None,
        };
        let last = self.in_layers.len() - 1;
        let mut x = x.clone();
        let mut output: Option<Tensor> = None;
        for (i, (inp, rs)) in self.in_layers.iter().zip(&self.res_skip).enumerate() {
            let mut x_in = inp.forward(&x)?;
            if let Some(g) = &g {
                x_in = x_in.broadcast_add(&g.narrow(1, i * 2 * self.hidden, 2 * self.hidden)?)?;
            }
            let (t, s) = split_channels(&x_in, self.hidden)?;
            let acts = (t.tanh()? * candle_nn::ops::sigmoid(&s)?)?;
            let rs = rs.forward(&acts)?;
            let skip = if i < last {
                let (res, skip) = split_channels(&rs, self.hidden)?;
                x = (x + res)?;
                skip
            } else {
                rs
            };
            output = Some(match output {
                Some(o) => (o + skip)?,
                None => skip,
            });
        }
        output.ok_or_else(|| VitsError::Input("an empty WN stack".to_owned()))
    }
}

/// One `ResidualCouplingLayer` (mean only).
#[derive(Debug, Clone)]
pub struct Coupling {
    pre: Conv,
    enc: Wn,
    post: Conv,
    half: usize,
}

impl Coupling {
    /// Every convolution of the module, for choosing their CPU kernel.
    pub fn convs_mut(&mut self) -> Vec<&mut Conv> {
        let mut v = vec![&mut self.pre, &mut self.post];
        v.extend(self.enc.convs_mut());
        v
    }

    pub fn load(ck: &Checkpoint, name: &str, device: &Device) -> Result<Self, VitsError> {
        let post = Conv::load(ck, &format!("{name}.post"), device)?;
        Ok(Self {
            pre: Conv::load(ck, &format!("{name}.pre"), device)?,
            enc: Wn::load(ck, &format!("{name}.enc"), device)?,
            half: post.out_channels(),
            post,
        })
    }

    pub fn reverse(&self, x: &Tensor, g: Option<&Tensor>) -> Result<Tensor, VitsError> {
        let (x0, x1) = split_channels(x, self.half)?;
        let h = self.pre.forward(&x0)?;
        let h = self.enc.forward(&h, g)?;
        let m = self.post.forward(&h)?;
        Ok(Tensor::cat(&[&x0, &(x1 - m)?], 1)?)
    }
}

/// The coupling block: layers `flow.flows.0, 2, 4, ...` with flips between.
#[derive(Debug, Clone)]
pub struct Flow {
    layers: Vec<Coupling>,
}

impl Flow {
    /// Every convolution of the module, for choosing their CPU kernel.
    pub fn convs_mut(&mut self) -> Vec<&mut Conv> {
        self.layers
            .iter_mut()
            .flat_map(Coupling::convs_mut)
            .collect()
    }

    pub fn load(ck: &Checkpoint, device: &Device) -> Result<Self, VitsError> {
        let n = ck.count("flow.flows");
        let layers = (0..n)
            .step_by(2)
            .map(|i| Coupling::load(ck, &format!("flow.flows.{i}"), device))
            .collect::<Result<Vec<_>, _>>()?;
        if layers.is_empty() {
            return Err(VitsError::Weight {
                name: "flow.flows".to_owned(),
                reason: "no coupling layers".to_owned(),
            });
        }
        Ok(Self { layers })
    }

    /// `z_p` (`[1, channels, frames]`) to the decoder's latent.
    pub fn reverse(&self, z: &Tensor, g: Option<&Tensor>) -> Result<Tensor, VitsError> {
        let mut z = z.clone();
        for layer in self.layers.iter().rev() {
            z = flip_channels(&z)?;
            z = layer.reverse(&z, g)?;
        }
        Ok(z)
    }
}
