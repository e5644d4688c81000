"""Static checks of training code (read as text and AST, never run), on small loops written the
way they turn up in real repositories."""
import pathlib
import textwrap

import pytest

from analysis.analyzers import code as code_checks
from analysis.diagnose import diagnose
from analysis.ingest import load_run


def findings(tmp_path, source):
    (tmp_path / "train.py").write_text(textwrap.dedent(source))
    (tmp_path / "train.log").write_text("step=1 loss=2.0\nstep=2 loss=1.9\n")
    return {f.code: f for f in code_checks.analyze(load_run(tmp_path))}


def test_softmax_fed_to_cross_entropy(tmp_path):
    f = findings(tmp_path, """
        import torch
        def step(model, opt, x, y):
            logits = model(x)
            loss = torch.nn.functional.cross_entropy(torch.softmax(logits, -1), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
    """)["vanishing_gradients"]
    assert f.evidence[0].locator == "line 5" and "softmax" in f.evidence[0].text


def test_fp16_without_a_scaler_and_with_one(tmp_path):
    loop = """
        import torch
        def step(model, opt, x, y):
            with torch.autocast("cuda", dtype=torch.float16):
                loss = model(x, y)
            {backward}
            opt.step()
    """
    bare = findings(tmp_path, loop.format(backward="loss.backward()"))
    assert bare["numerical_instability"].evidence[0].locator == "line 4"
    scaled = findings(tmp_path, loop.format(backward="scaler = torch.amp.GradScaler(); scaler.scale(loss).backward()"))
    assert "numerical_instability" not in scaled


def test_frozen_model(tmp_path):
    f = findings(tmp_path, """
        import torch
        def train(model, data):
            for p in model.parameters():
                p.requires_grad = False
            optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
            for x, y in data:
                loss = model(x, y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
    """)["no_parameter_updates"]
    assert [e.locator for e in f.evidence] == ["line 5", "line 6"]


def test_a_backward_after_a_step_with_no_zero_grad_between(tmp_path):
    # CenterNet #928 (tests/wild centernet-missing-zero-grad-928, tune half): the reporter's code before
    # and after the fix, pasted one under the other; read top to bottom, the second backward adds to the
    # gradient the first step applied
    f = findings(tmp_path, """
        loss.backward()
        optimizer.step()

        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    """)["exploding_gradients"]
    assert [e.locator for e in f.evidence] == ["line 3", "line 5"]


def test_a_loop_that_clears_gradients_once_before_it_starts(tmp_path):
    loop = """
        import torch
        def train(model, data, optimizer, scheduler):
            optimizer.zero_grad()
            for x, y in data:
                {clear}loss = model(x, y)
                loss.backward()
                optimizer.step()
                scheduler.step()
    """
    f = findings(tmp_path, loop.format(clear=""))["exploding_gradients"]
    assert [e.locator for e in f.evidence] == ["line 8", "line 7"] and "next pass" in f.issue
    assert "exploding_gradients" not in findings(tmp_path, loop.format(clear="optimizer.zero_grad(); "))


def test_frozen_heads_in_a_paste_with_no_optimizer(tmp_path):
    # mmdetection #4040 (tests/wild mmdet-frozen-heads-no-grad-neck-4040, tune half): a block cut from a
    # detector's __init__, indented as in the class; "If the head is frozen, there will be no gradient be
    # passed to the neck. So you should not freeze the roi_head and rpn_head."
    text = (pathlib.Path(__file__).parent / "wild" / "cases" / "mmdet-frozen-heads-no-grad-neck-4040"
            / "train.py").read_text()
    (tmp_path / "train.py").write_text(text)
    run = load_run(tmp_path)
    assert run.code[0].parse_error is None
    f = {f.code: f for f in code_checks.analyze(run)}["no_parameter_updates"]
    assert "self.roi_head" in f.issue and f.evidence[0].locator == "line 3"
    # freezing the backbone alone (a linear probe) is no fault
    assert findings(tmp_path, """
        for p in model.backbone.parameters():
            p.requires_grad = False
    """) == {}


def test_a_correct_loop_raises_nothing(tmp_path):
    assert findings(tmp_path, """
        import torch
        def train(model, data):
            optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
            for x, y in data:
                logits = model(x)
                loss = torch.nn.functional.cross_entropy(logits, y)
                optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                z = (x - x.mean()) / (x.std() + 1e-6)
    """) == {}


def test_a_config_that_trains_in_float16_with_no_scaler(tmp_path):
    # nanoGPT #167 (tests/wild, tune half): the config block the reporter pasted; fp32 cured the NaN
    f = findings(tmp_path, """
        # in train_gpt2.py
        batch_size = 20
        learning_rate = 1e-5

        # in train.py
        dtype = 'float16'
    """)["numerical_instability"]
    assert f.evidence[0].locator == "line 7" and "float16" in f.evidence[0].text
    assert "numerical_instability" not in findings(tmp_path, "dtype = 'bfloat16'\nmodel_dtype = torch_dtype = 'auto'\n")


def test_a_training_loader_that_never_shuffles(tmp_path):
    loaders = """
        from torch.utils.data import DataLoader
        train_loader = DataLoader(train_set, batch_size=32{train})
        val_loader = DataLoader(val_set, batch_size=32, shuffle=False)
    """
    f = findings(tmp_path, loaders.format(train=""))["data_pipeline_bug"]
    assert f.evidence[0].locator == "line 3" and "shuffle=True" in f.patch
    unshuffled = findings(tmp_path, loaders.format(train=", shuffle=False"))["data_pipeline_bug"]
    assert unshuffled.evidence[0].locator == "line 3"
    for ok in (", shuffle=True", ", sampler=DistributedSampler(train_set)", ", shuffle=args.shuffle"):
        assert "data_pipeline_bug" not in findings(tmp_path, loaders.format(train=ok))


def test_an_optimizer_built_with_an_lr_above_its_range(tmp_path):
    built = """
        import torch
        LR = {lr}
        opt = torch.optim.{opt}(model.parameters(), lr=LR)
    """
    f = findings(tmp_path, built.format(opt="Adam", lr="0.1"))["lr_too_high"]
    assert f.evidence[0].locator == "line 4" and "0.1" in f.issue and "adam" in f.issue
    assert "lr_too_high" not in findings(tmp_path, built.format(opt="Adam", lr="3e-4"))
    assert "lr_too_high" not in findings(tmp_path, built.format(opt="SGD", lr="0.1"))     # SGD's usual top


def test_sound_loops_that_look_like_an_uncleared_step(tmp_path):
    """Two sides of one `if` never both run (torchvision's classification reference: the scaler's
    path or the plain one), and a backward after the last step (a saliency map) applies nothing."""
    amp = findings(tmp_path, """
        def train_one_epoch(model, criterion, optimizer, loader, scaler=None):
            for image, target in loader:
                loss = criterion(model(image), target)
                optimizer.zero_grad()
                if scaler is not None:
                    scaler.scale(loss).backward()
                    scaler.step(optimizer)
                    scaler.update()
                else:
                    loss.backward()
                    optimizer.step()
    """)
    saliency = findings(tmp_path, """
        for x, y in loader:
            optimizer.zero_grad()
            loss_fn(model(x), y).backward()
            optimizer.step()
        x.requires_grad_(True)
        model(x).max().backward()
    """)
    assert "exploding_gradients" not in amp and "exploding_gradients" not in saliency


def test_freezing_that_leaves_the_model_trainable_is_no_frozen_head(tmp_path):
    """An LLM recipe freezing the embeddings and lm_head trains the blocks between; a buffer built
    with requires_grad=False freezes no module; a frozen teacher's fc is the teacher's."""
    for source in ("""
        for p in model.model.embed_tokens.parameters():
            p.requires_grad = False
        for p in model.lm_head.parameters():
            p.requires_grad = False
    """, """
        self.register_buffer("mask", torch.ones(10, requires_grad=False))
        self.classifier.requires_grad_(False)
    """, """
        teacher.requires_grad_(False)
        teacher.fc.requires_grad_(False)
    """):
        assert "no_parameter_updates" not in findings(tmp_path, source), source


# Code that trains nothing though it runs: the loss never reaches the weights the optimizer holds
# (analysis/analyzers/code_updates.py). Each has a sound twin that must stay quiet.
def no_update(tmp_path, source):
    f = findings(tmp_path, source).get("no_parameter_updates")
    return f.issue if f else None


def test_layers_in_a_plain_list_are_not_registered_and_a_module_list_is(tmp_path):
    model = """
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = {held}
                self.out = nn.Linear(10, 2)
    """
    assert "plain Python list" in no_update(tmp_path, model.format(held="[nn.Linear(10, 10) for _ in range(3)]"))
    f = findings(tmp_path, model.format(held="[nn.Linear(10, 10), nn.ReLU()]"))["no_parameter_updates"]
    assert "nn.ModuleList([nn.Linear(10, 10), nn.ReLU()])" in f.patch
    assert no_update(tmp_path, model.format(held="nn.ModuleList([nn.Linear(10, 10) for _ in range(3)])")) is None
    assert no_update(tmp_path, model.format(held="[3, 5, 7]")) is None


def test_an_optimizer_over_a_model_that_is_then_replaced(tmp_path):
    loop = """
        import torch
        model = Net()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
        model = {again}
        for x, y in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
    """
    assert "replaced after optimizer" in no_update(tmp_path, loop.format(again="Net().cuda()"))
    for same in ("model.to('cuda')", "torch.nn.DataParallel(model)", "torch.compile(model)"):
        assert no_update(tmp_path, loop.format(again=same)) is None, same
    prepared = loop.replace("model = {again}",
                            "loader, model, optimizer = accelerator.prepare(loader, Net(), optimizer)")
    assert no_update(tmp_path, prepared) is None


def test_a_loss_rewrapped_from_its_value_has_no_graph(tmp_path):
    loop = """
        for x, y in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            {wrap}
            loss.backward()
            optimizer.step()
    """
    assert "re-made as a new tensor" in no_update(
        tmp_path, loop.format(wrap="loss = torch.tensor(loss.item(), requires_grad=True)"))
    assert no_update(tmp_path, loop.format(wrap="running = loss.item()")) is None


def test_a_loss_from_an_output_cut_off_from_the_graph(tmp_path):
    loop = """
        for x, y in loader:
            optimizer.zero_grad()
            {forward}
            loss = criterion({scored})
            loss.backward()
            optimizer.step()
        {after}
    """

    def read(forward, scored="out, y", after=""):
        return no_update(tmp_path, loop.format(forward=forward, scored=scored, after=after))
    assert "cut off from the graph" in read("out = model(x).detach()")
    assert "cut off from the graph" in read("with torch.no_grad(): out = model(x)")
    # sound: a detached teacher beside the student's live output; a GAN's D scoring detached fakes; a
    # validation pass under no_grad that reuses the training loop's names
    assert read("target = teacher(x).detach(); out = model(x)", "out, target") is None
    assert read("out = G(z).detach()", "D(out), y") is None
    assert read("out = model(x)", after="with torch.no_grad(): out = model(xv); loss = criterion(out, yv)") is None


def test_weights_moved_or_scaled_after_requires_grad_are_not_leaves(tmp_path):
    assert "not a leaf" in no_update(tmp_path, "w = torch.randn(10, 2, requires_grad=True).cuda()\n"
                                               "opt = torch.optim.SGD([w], lr=0.1)\n")
    # an input made to take a gradient (an adversarial perturbation) is no weight
    assert no_update(tmp_path, "delta = torch.zeros_like(x, requires_grad=True).to(device)\n") is None
    assert "not a leaf" in no_update(tmp_path, "w = torch.randn(10, 2, requires_grad=True) * 0.01\n"
                                               "opt = torch.optim.SGD([w], lr=0.1)\n")
    assert no_update(tmp_path, "loss = torch.tensor(0., requires_grad=True) + criterion(model(x), y)\n") is None
    assert no_update(tmp_path, "w = (torch.randn(10, 2) * 0.01).requires_grad_()\n") is None
    assert no_update(tmp_path, "w = torch.randn(10, 2, device='cuda', requires_grad=True)\n") is None


def test_a_pasted_loop_with_backward_and_no_step(tmp_path):
    loop = """
        for epoch in range(10):
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                {after}
    """
    assert "no optimizer step" in no_update(tmp_path, loop.format(after="print(loss.item())"))
    assert no_update(tmp_path, loop.format(after="opt.step()")) is None


def test_a_snippet_with_lines_python_cannot_parse_is_read_around_them(tmp_path):
    """A paste elides with `....` and keeps Python 2 prints (tests/wild pytorch-conv1d-submodules-in-list-1053):
    those lines become `pass`, the rest parses with the same line numbers and blocks (a Python 2 print as an
    if's only body leaves the step after it in the loop)."""
    f = findings(tmp_path, """
        class Net(th.nn.Module):
            def __init__(self):
                super(Net , self).__init__()
                self.conv1d = [th.nn.Conv1d(300, 1, 3), th.nn.Conv1d(300, 1, 4)]
        ....
        print net
    """)["no_parameter_updates"]
    assert f.evidence[0].locator == "line 5"
    py2 = """
        for i, (x, y) in enumerate(loader):
            optimizer.zero_grad()
            loss = criterion(net(x), y)
            loss.backward()
            if i % 100 == 0:
                print "loss", loss.data[0]
            optimizer.step()
    """
    assert no_update(tmp_path, py2) is None


def test_layers_built_in_forward_and_a_parameter_moved_after_it_was_made(tmp_path):
    model = """
        import torch.nn as nn
        class SoftPool(nn.Module):
            def __init__(self):
                super().__init__()
                {init}
            def forward(self, x):
                {forward}
                return x
    """
    assert "built inside SoftPool.forward()" in no_update(
        tmp_path, model.format(init="self.k = 3", forward="x = nn.Conv2d(8, 8, 3).cuda()(x)"))
    assert no_update(tmp_path, model.format(init="self.conv = nn.Conv2d(8, 8, 3)", forward="x = self.conv(x)")) \
        is None
    assert no_update(tmp_path, model.format(init="self.k = 3", forward="x = nn.ReLU()(x)")) is None
    assert "not a leaf" in no_update(tmp_path, model.format(
        init="self.t = torch.nn.Parameter(torch.rand(10)).cuda()", forward="x = x + self.t"))
    assert no_update(tmp_path, model.format(init="self.t = torch.nn.Parameter(torch.rand(10))",
                                            forward="x = x + self.t")) is None


def test_a_loss_accumulated_from_values_off_the_graph(tmp_path):
    """REINFORCE's `rl_loss -= log_prob * reward` with the log-probability taken through .detach().numpy()
    (tests/wild release-rl-loss-detached-numpy-no-grad-39); a running total kept for printing is .item()'s use."""
    assert "taken off the graph" in no_update(
        tmp_path, "rl_loss -= (log_probs[0, top_i].cpu().detach().numpy()*discounted_reward)\n")
    assert "taken off the graph" in no_update(tmp_path, "loss += out.item()\nloss.backward()\n")
    assert no_update(tmp_path, "running_loss += loss.item()\n") is None
    assert no_update(tmp_path, "rl_loss -= log_probs[0, top_i] * discounted_reward\n") is None


def test_tokens_added_and_the_embeddings_never_resized(tmp_path):
    # transformers #1062 (tests/wild transformers-openai-gpt-added-cls-token-no-resize-1062, tune half)
    source = """
        tokenizer = OpenAIGPTTokenizer.from_pretrained('openai-gpt')
        model = OpenAIGPTDoubleHeadsModel.from_pretrained('openai-gpt')
        tokenizer.add_special_tokens({'cls_token': '[CLS]'})
        input_ids = torch.tensor([tokenizer.encode(s) for s in choices]).unsqueeze(0)
    """
    f = findings(tmp_path, source)["data_pipeline_bug"]
    assert f.evidence[0].locator == "line 4" and f.severity == "high"
    assert "+model.resize_token_embeddings(len(tokenizer))" in f.patch
    resized = source + "    model.resize_token_embeddings(len(tokenizer))\n"
    assert "data_pipeline_bug" not in findings(tmp_path, resized)
    # a pad token set to one the vocabulary has adds no id
    same = source.replace("{'cls_token': '[CLS]'}", "{'pad_token': tokenizer.eos_token}")
    assert "data_pipeline_bug" not in findings(tmp_path, same)


@pytest.mark.parametrize("line", [
    # a Stack Overflow question (make_circles): binary_accuracy frozen at 0.5067 while the loss fell
    "model.add(tf.keras.layers.Dense(1, activation= tf.keras.activations.softmax))",
    # a Chinese mirror of a Stack Overflow question (it.cha138.com/wen1/show-438205.html): acc and val_acc the same
    # at every epoch, the loss constant at 7.9712
    'model.add(Dense(1,activation="softmax"))'])
def test_a_softmax_over_one_output_unit_predicts_one_class(tmp_path, line):
    (tmp_path / "train.py").write_text(line + "\n")
    d, _ = diagnose(tmp_path)
    top = d.root_causes[0]
    assert top.code == "no_parameter_updates" and "softmax over one output unit" in top.issue


def test_a_softmax_over_several_units_or_a_sigmoid_over_one_is_no_such_bug(tmp_path):
    # (and a comment that names the old layer; PyTorch's attention pooling, a softmax over a sequence of scores)
    (tmp_path / "train.py").write_text('model.add(Dense(10, activation="softmax"))\n'
                                       'head.add(Dense(1, activation="sigmoid"))\n# Dense(1, activation="softmax")\n'
                                       "model.add(Dense(2, activation='softmax'))  "
                                       "# was Dense(1, activation='softmax')\n"
                                       "attn = nn.Sequential(nn.Linear(hidden, 1), nn.Softmax(dim=1))\n")
    d, _ = diagnose(tmp_path)
    assert not any("softmax over one" in c.issue for c in d.root_causes)
