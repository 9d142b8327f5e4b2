"""Points the Python client yoto_api (github:cdnninja/yoto_api) at a Cardshelf: its base URLs
only, from CARDSHELF_URL, and, with BROKER_ADDRESS set, its MQTT broker's address (the TLS front
of scripts/public-clients/broker-tls.js, port 443; the certificate is trusted through
SSL_CERT_FILE). Loaded as a pytest plugin (`-p yoto_api_redirect`, with this folder on
PYTHONPATH) or imported before the client is used. The client's endpoints module holds the
public service's URLs as constants that its code reads at call time, and its MQTT client takes
the broker from the class attributes `YotoMqttClient.URL` and `PORT`, so replacing them is the
whole change; nothing of the client is copied here.
"""

import os

from yoto_api.mqtt.client import YotoMqttClient
from yoto_api.rest import endpoints

_base = os.environ["CARDSHELF_URL"].rstrip("/")
endpoints.BASE_URL = _base
endpoints.AUTH_URL = f"{_base}/oauth/device/code"
endpoints.TOKEN_URL = f"{_base}/oauth/token"

if os.environ.get("BROKER_ADDRESS"):
    YotoMqttClient.URL = os.environ["BROKER_ADDRESS"]
    YotoMqttClient.PORT = int(os.environ.get("BROKER_PORT", "443"))
