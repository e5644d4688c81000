"""A corpus of real-looking secrets, one or more per provider, generated here (none is real)."""
import random
import re
import string

_RNG = random.Random(20)
_ALNUM = string.ascii_letters + string.digits


def _r(n: int, alphabet: str = _ALNUM) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(n))


def secret_corpus() -> dict[str, tuple[str, str]]:
    """provider -> (text as a run would hold it, the part that must not survive)."""
    c = {}

    def add(name, text, secret):
        c[name] = (text, secret)

    add("aws key id", f"key AKIA{_r(16, string.ascii_uppercase + string.digits)} set", None)
    add("aws secret", f"aws_secret_access_key = {_r(40)}", None)
    add("aws session", f"aws_session_token={_r(60)}", None)
    add("github", f"token ghp_{_r(36)}", None)
    add("github pat", f"github_pat_{_r(22)}_{_r(59)}", None)
    add("slack bot", f"xoxb-{_r(12, string.digits)}-{_r(12, string.digits)}-{_r(24)}", None)
    add("slack refresh", f"refresh xoxe-1-{_r(40)}", None)
    add("slack rotated", f"xoxe.xoxp-1-{_r(40)}", None)
    add("slack webhook", f"posting to https://hooks.slack.com/services/T{_r(8)}/B{_r(8)}/{_r(24)}", None)
    add("hugging face", f"hf_{_r(34)}", None)
    add("HF_TOKEN", f"HF_TOKEN={_r(12)}", None)
    add("MY_API_KEY", f"export MY_API_KEY={_r(20)}", None)
    add("wandb", f"WANDB_API_KEY={_r(40, string.hexdigits.lower())}", None)
    add("anthropic", f"sk-ant-api03-{_r(40)}", None)
    add("openai", f"OPENAI: sk-proj-{_r(48)}", None)
    add("stripe live", f"sk_live_{_r(24)}", None)
    add("stripe restricted", f"rk_live_{_r(24)}", None)
    add("gitlab", f"glpat-{_r(20)}", None)
    add("npm", f"//registry.npmjs.org/:_authToken npm_{_r(36)}", None)
    add("google", f"key=AIza{_r(35)}", None)
    add("jwt", f"id eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI{_r(20)}.{_r(43)}", None)
    add("bearer", f"Authorization: Bearer {_r(32)}", None)
    add("bearer curl", f"curl -H 'authorization: token {_r(32)}'", None)
    add("access_token", f"GET /v1?access_token={_r(30)}&page=2", None)
    add("azure", f"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={_r(86)}==;EndpointSuffix=core", None)
    add("json password", '{"user": "ml", "password": "correct horse battery"}', "correct horse battery")
    add("json api_key", f'{{"api_key": "{_r(24)}"}}', None)
    add("json escaped", f'{{\\"api_key\\": \\"{_r(24)}\\"}}', None)
    add("python dict", f"dict(secret_key='{_r(16)}')", None)
    add("SECRET_KEY", f"SECRET_KEY={_r(50)}", None)
    add("--api-key", f"train.py --api-key {_r(24)} --epochs 3", None)
    add("--token", f"hf upload --token {_r(24)}", None)
    add("--hf-token", f"--hf-token {_r(24)}", None)
    add("yaml password", f"  password: {_r(14)}", None)
    add("url creds", f"postgresql://mltd:{_r(16)}@db:5432/x", None)
    add("redis empty user", f"redis://:{_r(16)}@cache:6379/0", None)
    add("private key", f"-----BEGIN RSA PRIVATE KEY-----\n{_r(64)}\n{_r(64)}\n-----END RSA PRIVATE KEY-----", None)
    return {k: (t, s or _secret_part(t)) for k, (t, s) in c.items()}


def _secret_part(text: str) -> str:
    """The longest random-looking run in `text`: what a leak would show."""
    return max(re.findall(r"[A-Za-z0-9+/]{12,}", text), key=len)


CORPUS = secret_corpus()
