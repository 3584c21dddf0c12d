"""The shapes of secrets redaction masks: service tokens, private key blocks, values given to secret names.

Standard library only, and no import at all: hooks load this module on every call, and compile a rule only
when a text holds one of the rule's markers (see fixloop.core.redact).

Each rule is (rule id, markers, pattern). Every match of the pattern contains, lower-cased, one of its
markers; tests/unit/core/test_secret_rules.py holds every rule to this. Patterns are compiled with
re.ASCII: a class such as [A-Za-z0-9] means what it says. The token shapes are those the issuing services
publish and that secret scanners look for; a lower bound with no upper one (`{36,}`) masks a longer run
whole rather than leaving its tail in clear.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

# The whole match is the secret.
TOKEN_RULES: tuple[tuple[str, tuple[str, ...], str], ...] = (
    (
        "private-key",
        ("-----begin",),
        # an unterminated block runs to the end
        r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----(?s:.*?)"
        r"(?:-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----|\Z)",
    ),
    ("jwt", ("eyj",), r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}"),
    ("jwt-unsigned", (".ey",), r"\bey[A-Za-z0-9_-]{10,}\.ey[A-Za-z0-9_/-]{10,}(?:\.[A-Za-z0-9_/-]*={0,2})?"),
    (
        "1password-secret-key",
        ("a3-",),
        r"\bA3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}\b",
    ),
    ("1password-service-account-token", ("ops_eyj",), r"\bops_eyJ[A-Za-z0-9+/]{250,}={0,3}"),
    ("adobe-client-secret", ("p8e-",), r"\bp8e-[A-Za-z0-9]{32,}"),
    ("age-secret-key", ("age-secret-key-1",), r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
    ("airtable-personal-access-token", ("pat",), r"\bpat[A-Za-z0-9]{14}\.[a-f0-9]{64}\b"),
    ("alibaba-access-key-id", ("ltai",), r"\bLTAI[A-Za-z0-9]{20,}"),
    ("openai-anthropic-api-key", ("sk-",), r"\bsk-[A-Za-z0-9_-]{16,}"),
    ("artifactory-api-key", ("akcp",), r"\bAKCp[A-Za-z0-9]{69,}"),
    ("artifactory-reference-token", ("cmvmd",), r"\bcmVmd[A-Za-z0-9]{59,}"),
    (
        "authress-access-key",
        (".acc",),
        r"\b(?:sc|ext|scauth|authress)_[A-Za-z0-9]{5,30}\.[A-Za-z0-9]{4,6}\.acc[_-][A-Za-z0-9-]{10,32}"
        r"\.[A-Za-z0-9+/_=-]{30,}",
    ),
    (
        "aws-access-key-id",
        ("a3t", "akia", "asia", "abia", "acca"),
        r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b",
    ),
    ("aws-bedrock-api-key", ("absk",), r"\bABSK[A-Za-z0-9+/]{109,}={0,2}"),
    (
        "aws-bedrock-short-lived-api-key",
        ("bedrock-api-key-",),
        r"\bbedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/=%&]*",
    ),
    ("azure-ad-client-secret", ("q~",), r"(?<![A-Za-z0-9_~.])[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,}"),
    ("clickhouse-api-secret", ("4b1d",), r"\b4b1d[A-Za-z0-9]{38}\b"),
    ("clojars-api-token", ("clojars_",), r"\b(?i:CLOJARS_)[A-Za-z0-9]{60,}"),
    ("cloudflare-origin-ca-key", ("v1.0-",), r"\bv1\.0-[a-f0-9]{24}-[a-f0-9]{146,}"),
    ("databricks-api-token", ("dapi",), r"\bdapi[a-f0-9]{32}(?:-[0-9])?\b"),
    ("digitalocean-token", ("_v1_",), r"\bdo[opr]_v1_[a-f0-9]{64,}"),
    ("doppler-api-token", ("dp.pt.",), r"\bdp\.pt\.[A-Za-z0-9]{43,}"),
    ("duffel-api-token", ("duffel_",), r"\bduffel_(?:test|live)_[A-Za-z0-9_=-]{43,}"),
    ("dynatrace-api-token", ("dt0c01.",), r"\bdt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64,}"),
    ("easypost-api-token", ("ezak", "eztk"), r"\bEZ[AT]K[A-Za-z0-9]{54,}"),
    ("facebook-page-access-token", ("eaam", "eaac"), r"\bEAA[MC][A-Za-z0-9]{100,}"),
    ("flutterwave-key", ("flwseck_test", "flwpubk_test"), r"\bFLW(?:SECK|PUBK)_TEST-[A-Za-z0-9]{12,}(?:-X)?"),
    (
        "flyio-access-token",
        ("fo1_", "fm1a_", "fm1r_", "fm2_"),
        r"\b(?:fo1_[A-Za-z0-9_-]{43,}|fm1[ar]_[A-Za-z0-9+/]{100,}={0,3}|fm2_[A-Za-z0-9+/]{100,}={0,3})",
    ),
    ("frameio-api-token", ("fio-u-",), r"\bfio-u-[A-Za-z0-9_=-]{64,}"),
    ("gcp-api-key", ("aiza",), r"\bAIza[A-Za-z0-9_-]{35,}"),
    ("github-token", ("ghp_", "gho_", "ghs_", "ghu_", "ghr_"), r"\bgh[posur]_[A-Za-z0-9]{20,}"),
    ("github-fine-grained-pat", ("github_pat_",), r"\bgithub_pat_[A-Za-z0-9_]{20,}"),
    (
        "gitlab-token",
        (
            "glpat-",
            "gldt-",
            "glft-",
            "glrt-",
            "glsoat-",
            "glffct-",
            "glimt-",
            "gloas-",
            "glagent-",
            "glptt-",
            "glcbt-",
        ),
        r"\bgl(?:pat|dt|ft|rt|soat|ffct|imt|oas|agent|ptt|cbt)-[A-Za-z0-9_.-]{20,}",
    ),
    ("gitlab-runner-registration-token", ("gr1348941",), r"\bGR1348941[A-Za-z0-9_-]{20,}"),
    ("gitlab-session-cookie", ("_gitlab_session=",), r"_gitlab_session=[0-9a-z]{32,}"),
    ("google-oauth-client-secret", ("gocspx-",), r"\bGOCSPX-[A-Za-z0-9_-]{28,}"),
    ("google-oauth-access-token", ("ya29.",), r"\bya29\.[A-Za-z0-9_-]{20,}"),
    ("grafana-api-key", ("eyjrijoi",), r"\beyJrIjoi[A-Za-z0-9]{70,}={0,3}"),
    ("grafana-cloud-api-token", ("glc_",), r"\bglc_[A-Za-z0-9+/]{32,}={0,3}"),
    ("grafana-service-account-token", ("glsa_",), r"\bglsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\b"),
    (
        "harness-api-key",
        ("pat.", "sat."),
        r"\b(?:pat|sat)\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20,}",
    ),
    ("hashicorp-tf-api-token", (".atlasv1.",), r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}"),
    ("heroku-api-key-v2", ("hrku-aa",), r"\bHRKU-AA[A-Za-z0-9_-]{58,}"),
    ("huggingface-access-token", ("hf_",), r"\bhf_[A-Za-z]{34,}"),
    ("huggingface-organization-api-token", ("api_org_",), r"\bapi_org_[A-Za-z]{34,}"),
    ("infracost-api-token", ("ico-",), r"\bico-[A-Za-z0-9]{32,}"),
    ("intra42-client-secret", ("s-s4t2",), r"\bs-s4t2(?:ud|af)-[a-f0-9]{64,}"),
    ("linear-api-key", ("lin_api_",), r"\blin_api_[A-Za-z0-9]{40,}"),
    ("lob-api-key", ("live_", "test_"), r"\b(?:live|test)_(?:pub_)?[a-f0-9]{31,}\b"),
    ("mailchimp-api-key", ("-us",), r"\b[a-f0-9]{32}-us[0-9]{1,2}\b"),
    ("mailgun-key", ("key-",), r"\b(?:pub)?key-[a-f0-9]{32}\b"),
    ("mapbox-api-token", ("pk.", "sk."), r"\b[ps]k\.[A-Za-z0-9]{60,}\.[A-Za-z0-9_-]{22,}"),
    ("maxmind-license-key", ("_mmk",), r"\b[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk\b"),
    (
        "microsoft-teams-webhook",
        ("webhook.office.com",),
        r"https://[A-Za-z0-9-]+\.webhook\.office\.com/[A-Za-z0-9@/_.-]{20,}",
    ),
    ("new-relic-key", ("nrak-", "nrii-", "nrjs-"), r"\bNR(?:AK|II|JS)-[A-Za-z0-9-]{19,}"),
    ("notion-api-token", ("ntn_",), r"\bntn_[0-9]{11}[A-Za-z0-9]{35,}"),
    ("npm-access-token", ("npm_",), r"\bnpm_[A-Za-z0-9]{36,}"),
    ("octopus-deploy-api-key", ("api-",), r"\bAPI-[A-Z0-9]{26,}\b"),
    ("openshift-user-token", ("sha256~",), r"\bsha256~[A-Za-z0-9_-]{43,}"),
    ("perplexity-api-key", ("pplx-",), r"\bpplx-[A-Za-z0-9]{48,}"),
    ("planetscale-token", ("pscale_",), r"\bpscale_(?:tkn|oauth|pw)_[A-Za-z0-9_=.-]{32,}"),
    ("postman-api-token", ("pmak-",), r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34,}"),
    ("prefect-api-token", ("pnu_",), r"\bpnu_[A-Za-z0-9]{36,}"),
    ("pulumi-api-token", ("pul-",), r"\bpul-[a-f0-9]{40,}"),
    ("pypi-upload-token", ("pypi-ageichlwas5vcmc",), r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}"),
    ("readme-api-token", ("rdme_",), r"\brdme_[a-z0-9]{70,}"),
    ("rubygems-api-token", ("rubygems_",), r"\brubygems_[a-f0-9]{48,}"),
    ("scalingo-api-token", ("tk-us-",), r"\btk-us-[A-Za-z0-9_-]{48,}"),
    ("sendgrid-api-token", ("sg.",), r"\bSG\.[A-Za-z0-9=_.-]{60,}"),
    ("sendinblue-api-token", ("xkeysib-",), r"\bxkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16,}"),
    ("sentry-org-token", ("sntrys_",), r"\bsntrys_eyJ[A-Za-z0-9+/=_]{50,}"),
    ("sentry-user-token", ("sntryu_",), r"\bsntryu_[a-f0-9]{64,}"),
    ("settlemint-token", ("sm_aat_", "sm_pat_", "sm_sat_"), r"\bsm_(?:aat|pat|sat)_[A-Za-z0-9]{16,}"),
    ("shippo-api-token", ("shippo_",), r"\bshippo_(?:live|test)_[a-fA-F0-9]{40,}"),
    ("shopify-token", ("shpat_", "shpca_", "shppa_", "shpss_"), r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32,}"),
    ("slack-token", ("xox",), r"\bxox[abposre]-[A-Za-z0-9-]{10,}"),
    ("slack-app-token", ("xapp-",), r"\bxapp-[0-9]-[A-Za-z0-9]+-[0-9]+-[A-Za-z0-9]+"),
    (
        "slack-webhook-url",
        ("hooks.slack.com",),
        r"(?:https?://)?hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/]{20,}",
    ),
    ("sourcegraph-access-token", ("sgp_",), r"\bsgp_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40,}"),
    ("square-token", ("eaaa", "sq0atp-", "sq0csp-"), r"\b(?:EAAA|sq0atp-|sq0csp-)[A-Za-z0-9_-]{22,}"),
    ("stripe-secret-key", ("_test_", "_live_", "_prod_"), r"\b(?:sk|rk)_(?:test|live|prod)_[A-Za-z0-9]{10,}"),
    ("stripe-webhook-secret", ("whsec_",), r"\bwhsec_[A-Za-z0-9+/=]{24,}"),
    ("telegram-bot-api-token", (":a",), r"\b[0-9]{5,16}:A[A-Za-z0-9_-]{34,}"),
    ("twilio-api-key", ("sk",), r"\bSK[0-9a-fA-F]{32}\b"),
    ("twitter-bearer-token", ("a" * 22,), r"\bA{22}[A-Za-z0-9%]{80,}"),
    ("typeform-api-token", ("tfp_",), r"\btfp_[A-Za-z0-9_.=-]{59,}"),
    ("vault-token", ("hvs.", "hvb."), r"\bhv[sb]\.[A-Za-z0-9_-]{90,}"),
    ("yandex-api-key", ("aqvn",), r"\bAQVN[A-Za-z0-9_-]{35,}"),
    ("yandex-access-token", ("t1.",), r"\bt1\.[A-Za-z0-9_-]+={0,2}\.[A-Za-z0-9_-]{86,}={0,2}"),
    ("atlassian-api-token", ("atatt3",), r"\bATATT3[A-Za-z0-9_=-]{186,}"),
    ("defined-networking-api-token", ("dnkey-",), r"\bdnkey-[A-Za-z0-9=_-]{26}-[A-Za-z0-9=_-]{52,}"),
    ("dropbox-short-lived-token", ("sl.",), r"\bsl\.[A-Za-z0-9._=-]{130,}"),
    # an app's id, `|` (or %7C in a URL), then its secret: an app access token
    ("facebook-app-access-token", ("|", "%7c"), r"\b[0-9]{15,16}(?:\||%7[Cc])[A-Za-z0-9_-]{27,40}\b"),
)

# Words that make a name hold a secret whatever its value looks like (`db_password = x`, `GITHUB_TOKEN: x`).
# The keyword must end the name, so `max_tokens` or `token_count` stay readable.
SECRET_WORD = (
    r"(?:password|passwd|passphrase|secret|token|api[_-]?key|apikey"
    r"|access[_-]?key|secret[_-]?key|private[_-]?key|account[_-]?key|credentials?)"
)

# Group 1 is kept, the rest of the match is the secret.
PREFIXED_RULES: tuple[tuple[str, tuple[str, ...], str], ...] = (
    (
        "nuget-config-password",
        ("<add key=",),
        r"""(?i:(<add\s+key="(?:cleartext)?password"\s+value="))[^"]+""",
    ),
    ("azure-sas-signature", ("sig=",), r"(?i:([?&]sig=))[A-Za-z0-9%+/=]{20,}"),
    # a base64 credential holding a digit, + or / (so "basic usage" stays as it is)
    ("basic-auth", ("basic",), r"(\b(?i:basic)[ \t]+)[A-Za-z0-9+/]{3,}[0-9+/][A-Za-z0-9+/]{3,}={0,2}"),
    # the whole `user:password` word (quoted in parts or not): a token often stands as the user name
    (
        "curl-user",
        ("-u",),
        r"""((?<![A-Za-z0-9_-])(?:-u|--user)[ =]+)"""
        r"""(?=[^\s:]{0,200}:)(?:"[^"\n]{0,200}"|'[^'\n]{0,200}'|[^\s"'])+""",
    ),
    (
        "sidekiq-credentials",
        ("__contribsys__com",),
        r"""((?i:BUNDLE_(?:ENTERPRISE|GEMS)__CONTRIBSYS__COM)["']?[ \t]*[:=][ \t]*["']?)"""
        r"[a-f0-9]{8}:[a-f0-9]{8}\b",
    ),
    # the whole value of an Authorization header, after its scheme: also the rest of a token of a known
    # shape that carried on in characters its rule leaves out
    (
        "authorization-header",
        ("authorization",),
        r"""((?i:authorization)["']?[ \t]*[:=][ \t]*(?:(?i:basic|bearer|token|api-token)[ \t]+)?)"""
        r"""(?=[^\s"']{8,})[^\s"']+""",
    ),
    # a secret name passed as a string, then its value: `getenv("api_token", "dafa7817-...")`
    (
        "secret-name-argument",
        # the name's last word and its closing quote (`",` alone is in every JSON text)
        tuple(
            word + quote
            for word in (
                "password",
                "passwd",
                "passphrase",
                "secret",
                "token",
                "key",
                "credential",
                "credentials",
            )
            for quote in "\"'"
        ),
        r"""((["'])[A-Za-z0-9_.-]*(?i:""" + SECRET_WORD + r""")\2[ \t]*,[ \t]*(["']))[^"'\s]{8,}(?=\3)""",
    ),
)

# Words that make a name hold a secret when its value also looks random (`cache_key: user` stays readable,
# `STRIPE_KEY=3f9a...` does not): the generic ones, then services whose keys have no recognisable prefix.
GENERIC_KEY_WORDS = ("key", "auth", "access", "api", "cred", "pass", "pwd", "secret", "token")
SERVICE_KEY_WORDS = (
    "adafruit",
    "adobe",
    "airtable",
    "algolia",
    "alibaba",
    "asana",
    "atlassian",
    "confluence",
    "jira",
    "beamer",
    "bitbucket",
    "bittrex",
    "meraki",
    "cloudflare",
    "codecov",
    "cohere",
    "coinbase",
    "confluent",
    "contentful",
    "contribsys",
    "datadog",
    "discord",
    "droneci",
    "dropbox",
    "etsy",
    "facebook",
    "fastly",
    "finicity",
    "finnhub",
    "flickr",
    "freshbooks",
    "gitter",
    "gocardless",
    "heroku",
    "hubspot",
    "intercom",
    "jfrog",
    "artifactory",
    "bintray",
    "kraken",
    "kucoin",
    "launchdarkly",
    "linear",
    "linkedin",
    "linked_in",
    "lob",
    "looker",
    "mailchimp",
    "mailgun",
    "mapbox",
    "mattermost",
    "messagebird",
    "netlify",
    "newrelic",
    "new_relic",
    "nytimes",
    "okta",
    "plaid",
    "privateai",
    "private_ai",
    "rapidapi",
    "sendbird",
    "sentry",
    "snyk",
    "sonar",
    "sourcegraph",
    "squarespace",
    "sumo",
    "telegram",
    "travis",
    "twitch",
    "twitter",
    "typeform",
    "yandex",
    "zendesk",
)
KEY_NAME_WORDS = GENERIC_KEY_WORDS + SERVICE_KEY_WORDS

# A name that may hold a secret, then how it is assigned (`=`, `:`, `=>`, `:=`, quotes around either side),
# then a value that may be a token. fixloop.core.redact masks the value when `looks_random` says so.
KEYED_ASSIGNMENT = r"[\"']?[ \t]*(?:=>|:{1,3}=|\?=|=|:)[ \t]*[\"'`]?"
KEYED_VALUE = (
    r"(?<![A-Za-z0-9_.-])([A-Za-z][A-Za-z0-9_.-]{0,79})"
    r"(" + KEYED_ASSIGNMENT + r")"
    r"([A-Za-z0-9_+/=.~-]{10,})"
)
# A name with a key word, a space or two, then a token: `the secret key wJalrXUt...` in prose. The token is
# long and mixes letters and digits (prose words do not), and must pass the same entropy test.
KEYED_TOKEN = (
    r"(?<![A-Za-z0-9_.-])([A-Za-z][A-Za-z0-9_.-]{0,79})([ \t]{1,3})"
    r"(?=[A-Za-z0-9_+/=.~-]{0,200}?[0-9])(?=[A-Za-z0-9_+/=.~-]{0,200}?[A-Za-z])"
    r"([A-Za-z0-9_+/=.~-]{16,})"
)
MIN_ENTROPY_GENERIC = 3.5  # bits per character, for a name with a generic word only
MIN_ENTROPY_SERVICE = 3.0  # for a name that says which service the key is for


def shannon_entropy(text: str) -> float:
    """Bits per character of `text` as its own character frequencies give them."""
    from math import log2

    size = len(text)
    return -sum(n / size * log2(n / size) for n in map(text.count, set(text))) if size else 0.0


_word_searches: list[tuple[float, Callable[[str], object]]] = []


def _searches() -> list[tuple[float, Callable[[str], object]]]:
    """(the entropy a name's value needs, a search for the words that ask for it), service names first;
    compiled on first use (only redaction calls keyed_secret, once it has loaded `re`)."""
    if not _word_searches:
        import re

        for minimum, words in (
            (MIN_ENTROPY_SERVICE, SERVICE_KEY_WORDS),
            (MIN_ENTROPY_GENERIC, GENERIC_KEY_WORDS),
        ):
            _word_searches.append((minimum, re.compile("|".join(map(re.escape, words))).search))
    return _word_searches


def keyed_secret(name: str, value: str) -> bool:
    """Whether `value`, assigned to `name`, is to be masked: the name holds a key word and the value looks
    random enough for it (a service's name asks for less)."""
    lowered = name.lower()
    for minimum, search in _searches():
        if search(lowered):
            return shannon_entropy(value) >= minimum
    return False
