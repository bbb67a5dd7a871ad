from core.routers import NumericIdRouter

from . import views

router = NumericIdRouter()
router.register("webhooks", views.WebhookViewSet, basename="webhook")
router.register("webhook-deliveries", views.WebhookDeliveryViewSet, basename="webhook-delivery")

urlpatterns = router.urls
