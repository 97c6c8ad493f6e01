//! `StochasticDurationPredictor` (`dp`), run in reverse: from noise and the text encoder's
//! output to each phoneme's log-duration.
//!
//! The reference's reverse pass uses the flows `Flip, ConvFlow 7, Flip, ConvFlow 5, Flip,
//! ConvFlow 3, Flip, ElementwiseAffine 0` (it drops flow 1 as unused): each `ConvFlow` predicts
//! a spline from one noise channel and the conditioning and undoes it on the other.

use candle_core::{Device, Tensor};

use crate::checkpoint::{Checkpoint, DP_EXP_NEG_LOGS};
use crate::layers::{flip_channels, split_channels, tensor, ChannelNorm, Conv};
use crate::spline;
use crate::VitsError;

/// `modules.DDSConv`: dilated depthwise-separable convolutions with layer norms and GELU.
#[derive(Debug, Clone)]
pub struct DdsConv {
    layers: Vec<(Conv, ChannelNorm, Conv, ChannelNorm)>,
}

impl DdsConv {
    /// Every convolution of the module, for choosing their CPU kernel.
    pub fn convs_mut(&mut self) -> Vec<&mut Conv> {
        self.layers
            .iter_mut()
            .flat_map(|(a, _, b, _)| [a, b])
            .collect()
    }

    pub fn load(ck: &Checkpoint, name: &str, device: &Device) -> Result<Self, VitsError> {
        let n = ck.count(&format!("{name}.convs_sep"));
        let layers = (0..n)
            .map(|i| {
                Ok((
                    Conv::load(ck, &format!("{name}.convs_sep.{i}"), device)?,
                    ChannelNorm::load(ck, &format!("{name}.norms_1.{i}"), device)?,
                    Conv::load(ck, &format!("{name}.convs_1x1.{i}"), device)?,
                    ChannelNorm::load(ck, &format!("{name}.norms_2.{i}"), device)?,
                ))
            })
            .collect::<Result<_, VitsError>>()?;
        Ok(Self { layers })
    }

    pub fn forward(&self, x: &Tensor, g: Option<&Tensor>) -> Result<Tensor, VitsError> {
        let mut x = match g {
            Some(g) => (x + g)?,
            None => x.clone(),
        };
        for (sep, norm_1, one, norm_2) in &self.layers {
            let y = norm_1.forward(&sep.forward(&x)?)?.gelu_erf()?;
            let y = norm_2.forward(&one.forward(&y)?)?.gelu_erf()?;
            x = (x + y)?;
        }
        Ok(x)
    }
}

/// `modules.ConvFlow`: a rational-quadratic spline coupling on two channels.
#[derive(Debug, Clone)]
pub struct ConvFlow {
    pre: Conv,
    convs: DdsConv,
    proj: Conv,
    filter_channels: usize,
}

/// Bins of every Piper duration flow and the interval the spline covers.
const TAIL_BOUND: f32 = 5.0;

impl ConvFlow {
    /// Every convolution of the module, for choosing their CPU kernel.
    pub fn convs_mut(&mut self) -> Vec<&mut Conv> {
        let mut v = vec![&mut self.pre, &mut self.proj];
        v.extend(self.convs.convs_mut());
        v
    }

    pub fn load(ck: &Checkpoint, name: &str, device: &Device) -> Result<Self, VitsError> {
        let pre = Conv::load(ck, &format!("{name}.pre"), device)?;
        let proj = Conv::load(ck, &format!("{name}.proj"), device)?;
        let filter_channels = pre.out_channels();
        if proj.out_channels() % 3 != 2 {
            return Err(VitsError::Weight {
                name: format!("{name}.proj"),
                reason: format!(
                    "{} outputs is not 3·bins - 1 for one channel",
                    proj.out_channels()
                ),
            });
        }
        Ok(Self {
            pre,
            convs: DdsConv::load(ck, &format!("{name}.convs"), device)?,
            proj,
            filter_channels,
        })
    }

    /// The flow in reverse on `z` (`[1, 2, t]`), conditioned on `g` (`[1, filter, t]`).
    pub fn reverse(&self, z: &Tensor, g: &Tensor) -> Result<Tensor, VitsError> {
        let (z0, z1) = split_channels(z, 1)?;
        let h = self.pre.forward(&z0)?;
        let h = self.convs.forward(&h, Some(g))?;
        let h = self.proj.forward(&h)?; // [1, 3·bins - 1, t]
        let params = h.squeeze(0)?.to_vec2::<f32>()?;
        let bins = (params.len() + 1) / 3;
        let t = z1.dim(2)?;
        let inputs = z1.flatten_all()?.to_vec1::<f32>()?;
        let norm = (self.filter_channels as f32).sqrt();
        let mut out = Vec::with_capacity(t);
        let mut w = vec![0f32; bins];
        let mut hgt = vec![0f32; bins];
        let mut d = vec![0f32; bins - 1];
        for (i, &x) in inputs.iter().enumerate() {
            for k in 0..bins {
                w[k] = params[k][i] / norm;
                hgt[k] = params[bins + k][i] / norm;
            }
            for k in 0..bins - 1 {
                d[k] = params[2 * bins + k][i];
            }
            out.push(spline::inverse(x, &w, &hgt, &d, TAIL_BOUND));
        }
        let z1 = Tensor::from_vec(out, (1, 1, t), z.device())?;
        Ok(Tensor::cat(&[&z0, &z1], 1)?)
    }
}

/// The stochastic duration predictor, reverse pass only.
#[derive(Debug, Clone)]
pub struct DurationPredictor {
    pre: Conv,
    convs: DdsConv,
    proj: Conv,
    cond: Option<Conv>,
    /// Flows 7, 5, 3 (in the order the reverse pass runs them).
    flows: Vec<ConvFlow>,
    mean: Tensor,
    exp_neg_logs: Tensor,
}

impl DurationPredictor {
    /// Every convolution of the module, for choosing their CPU kernel.
    pub fn convs_mut(&mut self) -> Vec<&mut Conv> {
        let mut v = vec![&mut self.pre, &mut self.proj];
        v.extend(self.cond.as_mut());
        v.extend(self.convs.convs_mut());
        v.extend(self.flows.iter_mut().flat_map(ConvFlow::convs_mut));
        v
    }

    pub fn load(ck: &Checkpoint, device: &Device) -> Result<Self, VitsError> {
        let n = ck.count("dp.flows");
        // flows: 0 affine, then (ConvFlow, Flip) pairs; the reverse pass skips ConvFlow 1.
        let flows = (3..n)
            .rev()
            .filter(|i| i % 2 == 1)
            .map(|i| ConvFlow::load(ck, &format!("dp.flows.{i}"), device))
            .collect::<Result<Vec<_>, _>>()?;
        if flows.is_empty() {
            return Err(VitsError::Weight {
                name: "dp.flows".to_owned(),
                reason: "no convolutional flows".to_owned(),
            });
        }
        let mean = tensor(ck, "dp.flows.0.m", device, Some(&[2, 1]))?.unsqueeze(0)?;
        let exp_neg_logs = if ck.params.contains_key(DP_EXP_NEG_LOGS) {
            tensor(ck, DP_EXP_NEG_LOGS, device, Some(&[2, 1]))?
        } else {
            tensor(ck, "dp.flows.0.logs", device, Some(&[2, 1]))?
                .neg()?
                .exp()?
        }
        .unsqueeze(0)?;
        let cond = if ck.convs.contains_key("dp.cond") {
            Some(Conv::load(ck, "dp.cond", device)?)
        } else {
            None
        };
        Ok(Self {
            pre: Conv::load(ck, "dp.pre", device)?,
            convs: DdsConv::load(ck, "dp.convs", device)?,
            proj: Conv::load(ck, "dp.proj", device)?,
            cond,
            flows,
            mean,
            exp_neg_logs,
        })
    }

    /// Log-durations `[1, 1, t]` from the encoder's `x` and the noise `[1, 2, t]` (already
    /// scaled by `noise_w`); `g` is the speaker embedding of a multi-speaker voice.
    pub fn reverse(
        &self,
        x: &Tensor,
        noise: &Tensor,
        g: Option<&Tensor>,
    ) -> Result<Tensor, VitsError> {
        let mut h = self.pre.forward(x)?;
        if let (Some(cond), Some(g)) = (&self.cond, g) {
            h = h.broadcast_add(&cond.forward(g)?)?;
        }
        let h = self.convs.forward(&h, None)?;
        let h = self.proj.forward(&h)?;
        let mut z = noise.clone();
        for flow in &self.flows {
            z = flip_channels(&z)?;
            z = flow.reverse(&z, &h)?;
        }
        z = flip_channels(&z)?;
        z = z
            .broadcast_sub(&self.mean)?
            .broadcast_mul(&self.exp_neg_logs)?;
        Ok(z.narrow(1, 0, 1)?)
    }
}
