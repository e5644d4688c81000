"""Training code pasted alone with no known bug in it: a differential, not "nothing shows a fault".
The pasted lines are those of real threads (the wild corpus's tuning half)."""
import textwrap

from analysis.analyzers import code as code_checks
from analysis.diagnose import diagnose
from analysis.ingest import load_run
from analysis.ingest.configs import _blank_unparsable


def ranked(tmp_path, source, log=None):
    (tmp_path / "train.py").write_text(textwrap.dedent(source))
    if log is not None:
        (tmp_path / "train.log").write_text(log)
    return sorted(code_checks.analyze(load_run(tmp_path)), key=lambda f: -f.confidence)


def test_a_mask_through_the_image_transform_puts_the_data_first(tmp_path):
    # pytorch#53959: ToTensor in the transform rescales the class indices of a mask to [0, 1]
    f = ranked(tmp_path, "mask = self.tfm(mask)\n")
    assert [x.code for x in f[:2]] == ["data_pipeline_bug", "no_parameter_updates"]
    assert f[0].evidence[0].locator == "line 1" and "self.tfm(mask)" in f[0].evidence[0].text
    assert all(x.severity == "medium" and x.confidence < 0.5 for x in f)


def test_a_dataset_zipped_with_itself_is_the_data_not_tf_data(tmp_path):
    # tensorflow#37581: each copy shuffles on its own, so inputs and targets are out of step
    f = ranked(tmp_path, "zipdata = tf.data.Dataset.zip((train_dataset, train_dataset))\n")
    assert f[0].code == "data_pipeline_bug"
    assert next(x for x in f if x.code == "no_parameter_updates").confidence < f[0].confidence


def test_a_detached_output_in_a_snippet_puts_the_updates_first(tmp_path):
    # deep-cage#16: a detached tensor feeds the regularizer, so its loss moves nothing
    f = ranked(tmp_path, """
        weights = weights.detach()

        self.loss["WREG"]+=self.mvc_reg_loss(all_outputs["weight"])*self.opt.mvc_weight
    """)
    assert f[0].code == "no_parameter_updates" and f[0].evidence[0].locator == "line 2"


def test_half_precision_in_code_python_cannot_parse_puts_the_numerics_first(tmp_path):
    # torch7 cudnn#377 (Lua): an fp16 model whose Adam epsilon rounds to zero
    f = ranked(tmp_path, """\
        criterion = cudnn.SpatialCrossEntropyCriterion(classWeights):cudaHalf()

         model = createNet()
         model = model:cudaHalf()
    """)
    assert f[0].code == "numerical_instability"
    assert [e.locator for e in f[0].evidence] == ["line 1", "line 4"]
    assert "could not be parsed" in f[0].issue


def test_a_compilers_fast_math_puts_the_numerics_first(tmp_path):
    # cnn_lstm_ctc_ocr #5 (tests/wild, tune half): the reporter's .theanorc; the loss turned NaN on the GPU
    # until nvcc's fastmath was turned off
    f = ranked(tmp_path, "[global]\nmode=FAST_RUN\ndevice=gpu\nfloatX=float32\noptimizer=fast_compile\n"
                         "[nvcc]\nfastmath=True\n")
    assert f[0].code == "numerical_instability" and f[0].evidence[0].locator == "line 7"
    assert ranked(tmp_path, "[nvcc]\nfastmath=False\n")[0].code != "numerical_instability"


def test_no_suspects_beside_a_log(tmp_path):
    assert ranked(tmp_path, "mask = self.tfm(mask)\n", log="epoch 1 loss 0.69\nepoch 2 loss 0.68\n") == []


def test_a_found_bug_leaves_no_suspects(tmp_path):
    f = ranked(tmp_path, """
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
    """)
    assert [x.code for x in f] == ["no_parameter_updates"] and f[0].confidence >= 0.5


def test_the_reply_ranks_the_suspects_and_names_what_tells_them_apart(tmp_path):
    (tmp_path / "train.py").write_text("mask = self.tfm(mask)\n")
    d, _ = diagnose(tmp_path)
    assert d.status == "needs_more_data"
    assert [c.code for c in d.root_causes][:2] == ["data_pipeline_bug", "no_parameter_updates"]
    assert d.tell_apart


def test_a_bolded_call_in_pasted_code_loses_its_markup_not_its_line():
    # image2reverb#37: the poster bolded the call they asked about
    text, _ = _blank_unparsable("d_fake2 = self.d(**fake_spec.detach()**, f)\nG = F.mse_loss(d_fake2, ones)\n")
    assert text.splitlines()[0] == "d_fake2 = self.d(fake_spec.detach(), f)"
    assert _blank_unparsable("f(**kw)\nprint x\n")[0].splitlines() == ["f(**kw)", "pass"]


def test_a_sound_script_points_at_nothing_and_bytes_that_are_no_code_get_no_suspects(tmp_path):
    f = ranked(tmp_path, """
        import torch
        from torch.utils.data import DataLoader, TensorDataset
        model = torch.nn.Linear(4, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for x, y in DataLoader(TensorDataset(torch.randn(8, 4), torch.randint(0, 2, (8,))), batch_size=4):
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
        model.eval()
        with torch.no_grad():
            acc = (model(x).argmax(1) == y).float().mean()
    """)
    updates = next(x for x in f if x.code == "no_parameter_updates")
    assert updates.confidence == 0.3 and "no line of the paste points at it" in updates.evidence[0].text
    (tmp_path / "train.py").write_bytes(bytes(range(256)) * 40)
    assert code_checks.analyze(load_run(tmp_path)) == []


def test_the_line_a_repair_blanked_is_still_the_one_pointed_at(tmp_path):
    f = ranked(tmp_path, """\
        for x, y in loader:
            z = self.enc(x)
            out = self.d(**z.detach()**, f) +
            loss = crit(out, y)
    """)
    updates = next(x for x in f if x.code == "no_parameter_updates")
    assert updates.evidence[0].locator == "line 3" and "z.detach()" in updates.evidence[0].text


def test_a_long_line_of_one_word_is_read_in_linear_time(tmp_path):
    import time
    t = time.process_time()
    ranked(tmp_path, "x = " + "requires_grad" * 20000 + "\n")
    assert time.process_time() - t < 3


def test_an_epsilon_too_small_for_half_precision_points_at_the_numerics(tmp_path):
    # YOLOX #1565 (tests/wild, tune half): `clamp(1e-16)` is 0 in fp16, and the CIoU term divides by it
    f = ranked(tmp_path, """\
        elif self.loss_type == 'ciou':
            diou = iou - d / c.clamp(1e-16)
            with torch.no_grad():
                arctan = torch.atan(w_gt / h_gt.clamp(1e-16)) - torch.atan(w / h.clamp(1e-16))
    """)
    assert f[0].code == "numerical_instability" and f[0].evidence[0].locator == "line 2"


def test_code_whose_shown_output_is_nan_puts_the_numerics_first(tmp_path):
    # pytorch #2421 (tests/wild, tune half): the gradient of a norm at 0 is 0/0, and the paste shows it printed nan
    f = ranked(tmp_path, """\
        x = Variable(torch.zeros(1), requires_grad=True)
        x.norm().backward()
        print x.grad

        # Variable containing:
        # nan
        # [torch.FloatTensor of size 1]
    """)
    assert f[0].code == "numerical_instability"
    assert [e.locator for e in f[0].evidence] == ["line 6"]
    # a comment that only speaks of NaN, or a norm computed for logging, points at nothing
    g = ranked(tmp_path, "# drop rows whose label is NaN before the forward pass\n"
                         "total = torch.norm(torch.stack([p.grad.norm() for p in params]))\n")
    assert next(x for x in g if x.code == "numerical_instability").confidence == 0.22


def test_a_trainers_mixed_precision_flag_points_at_the_numerics(tmp_path):
    # denoising-diffusion-pytorch #191 (tests/wild, tune half): the samples went NaN until `amp` was turned off
    f = ranked(tmp_path, """\
        trainer = Trainer(
            diffusion,
            train_lr = 8e-5,
            amp = True,                       # turn on mixed precision
        )
    """)
    assert f[0].code == "numerical_instability" and f[0].evidence[0].locator == "line 4"


def test_process_group_setup_lists_the_distributed_suspect_and_only_then(tmp_path):
    # diffusers #3886 (tests/wild, tune half): the reporter's fix, a longer process-group timeout for a collective
    # that waited while rank 0 saved images
    f = ranked(tmp_path, """\
        kwargs = InitProcessGroupKwargs(timeout=timedelta(seconds=7200))
        accelerator = Accelerator(kwargs_handlers=[kwargs])
    """)
    dist = next(x for x in f if x.code == "distributed_failure")
    assert dist.evidence[0].locator == "line 1" and f.index(dist) < 3
    # a script that starts no process group has no such suspect, nor one that only reads or compares its size
    g = ranked(tmp_path, "model = Net()\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                         "world_size = int(os.environ.get('WORLD_SIZE', 1))\nassert args.world_size == 1\n")
    assert "distributed_failure" not in [x.code for x in g]


def test_mixed_precision_switched_off_points_at_nothing(tmp_path):
    f = ranked(tmp_path, "scaler = torch.cuda.amp.GradScaler(enabled=False)   # AMP disabled: plain fp32\n"
                         "optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)\n")
    assert next(x for x in f if x.code == "numerical_instability").confidence == 0.22
